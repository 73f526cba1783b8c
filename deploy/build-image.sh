#!/bin/sh
# Builds Patron's image (deploy/Containerfile) from this checkout with podman, buildah or docker, whichever is found
# first (or CONTAINER_ENGINE=docker …). Extra arguments go to the build: deploy/build-image.sh -t patron:0.1.0
#
# podman and buildah: `--format docker` keeps the HEALTHCHECK (the OCI format has none). On a host whose cgroups are
# "hybrid" (cgroup v1, with a controller on the v2 hierarchy at /sys/fs/cgroup/unified), crun refuses every RUN step
# ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2"): the build's RUN steps then run with
# chroot isolation (BUILDAH_ISOLATION=chroot, which podman build and buildah read), which needs no OCI runtime and
# no cgroup. Set BUILDAH_ISOLATION yourself to choose. docker's daemon runs RUN steps with its own runtime.
set -eu
cd "$(dirname "$0")/.."
engine=${CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  for candidate in podman buildah docker; do
    if command -v "$candidate" >/dev/null 2>&1; then engine=$candidate; break; fi
  done
fi
case "$engine" in
  podman | buildah)
    controllers=/sys/fs/cgroup/unified/cgroup.controllers
    if [ -z "${BUILDAH_ISOLATION:-}" ] && [ -r "$controllers" ] && [ -n "$(tr -d ' \n' < "$controllers")" ]; then
      echo "build-image: hybrid cgroups ($(cat "$controllers") on cgroup v2): RUN steps with --isolation=chroot" >&2
      export BUILDAH_ISOLATION=chroot
    fi
    set -- --format docker "$@"
    ;;
  docker) ;;
  '') echo "build-image: none of podman, buildah or docker is installed" >&2; exit 1 ;;
  *) echo "build-image: CONTAINER_ENGINE must be podman, buildah or docker, not $engine" >&2; exit 2 ;;
esac
set -x
exec "$engine" build -f deploy/Containerfile -t "${IMAGE:-localhost/patron:latest}" "$@" .
