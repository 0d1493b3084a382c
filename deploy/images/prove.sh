#!/usr/bin/env bash
# Proves the container image on this machine: builds it with buildah (build.sh), then runs
# tests/images.prove.ts, which starts every service from the image (`buildah run --isolation chroot`, host
# network) against the local PostgreSQL (a fresh database, migrated by the image's `migrate`), Redis and
# Kafka (its own KAFKA_GROUP_PREFIX), on free ports, and passes a smoke test through the gateway: sign-up,
# project, /v1/track, a verified domain and /v1/send into an SMTP sink. Needs root (buildah). Not part of
# `npm test`: it takes minutes.
#
#   deploy/images/prove.sh          # HERALD_IMAGE defaults to localhost/herald:prove
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
export HERALD_IMAGE=${HERALD_IMAGE:-localhost/herald:prove}
started=$(date +%s)
"$root/deploy/images/build.sh"
built=$(date +%s)
cd "$root"
# The test's own helpers (@herald/testing, @herald/devinfra) from the checkout: install and build them.
[ -x node_modules/.bin/turbo ] || npm run typecheck
export PATH="$root/node_modules/.bin:$root/.herald/tools/node_modules/.bin:$PATH"
turbo run build --filter='@herald/tests^...' --output-logs=errors-only
(cd tests && vitest run --config vitest.images.config.ts)
finished=$(date +%s)
printf 'prove: image built in %d s, stack run and smoke-tested in %d s\n' $((built - started)) $((finished - built))
