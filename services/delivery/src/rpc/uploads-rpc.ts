import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Image, ImageSchema, type UploadsService } from "@herald/proto/herald/delivery/v1/uploads_service_pb";
import type { StoredImage, Uploads } from "../uploads/uploads.js";

const imageToProto = (image: StoredImage): Image => create(ImageSchema, image);

export function createUploadsRpc(deps: { uploads: Uploads }): ServiceImpl<typeof UploadsService> {
  const { uploads } = deps;
  return {
    async uploadImage(request) {
      return { image: imageToProto(await uploads.upload(request.projectId, request.data)) };
    },
    async getImage(request) {
      const { image, data } = await uploads.get(request.projectId, request.fileName);
      return { image: imageToProto(image), data };
    },
  };
}
