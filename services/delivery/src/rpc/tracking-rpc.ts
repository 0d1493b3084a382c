import type { ServiceImpl } from "@connectrpc/connect";
import { validationFailed } from "@herald/errors";
import { TrackingMode, type TrackingService } from "@herald/proto/herald/delivery/v1/tracking_service_pb";
import type { TrackingMode as ModeName } from "../tracking/html-tracking.js";
import type { Tracking } from "../tracking/tracking.js";

const modeToProto: Record<ModeName, TrackingMode> = {
  enabled: TrackingMode.ENABLED,
  disabled: TrackingMode.DISABLED,
  marketing: TrackingMode.MARKETING,
};

function modeFromProto(mode: TrackingMode): ModeName {
  switch (mode) {
    case TrackingMode.ENABLED:
      return "enabled";
    case TrackingMode.DISABLED:
      return "disabled";
    case TrackingMode.MARKETING:
      return "marketing";
    default:
      throw validationFailed("mode must be enabled, disabled or marketing", [
        { field: "mode", message: "must be enabled, disabled or marketing", code: "invalid_enum_value" },
      ]);
  }
}

export function createTrackingRpc(deps: { tracking: Tracking }): ServiceImpl<typeof TrackingService> {
  const { tracking } = deps;
  return {
    async recordOpen(request) {
      await tracking.recordOpen(request.token);
      return {};
    },
    async recordClick(request) {
      return { url: await tracking.recordClick(request.token) };
    },
    async resolveClick(request) {
      return { url: await tracking.resolveClick(request.token) };
    },
    async getRecipient(request) {
      return { recipient: await tracking.getRecipient(request.token) };
    },
    async setSubscription(request) {
      return { recipient: await tracking.setSubscription(request.token, request.subscribed) };
    },
    async getTrackingSettings(request) {
      return { mode: modeToProto[await tracking.modeOf(request.projectId)] };
    },
    async updateTrackingSettings(request) {
      return { mode: modeToProto[await tracking.setMode(request.projectId, modeFromProto(request.mode))] };
    },
  };
}
