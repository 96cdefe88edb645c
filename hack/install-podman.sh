#!/usr/bin/env bash
# Installs podman and runc from Debian's packages when either is missing, for the container test
# (test/container). A no-op when both are present. Needs root and apt-get; without them it says
# what to install and fails, so that the test never silently does not run.
set -euo pipefail

if command -v podman >/dev/null && command -v runc >/dev/null; then
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "install-podman: podman and runc are missing and apt-get is not available: install them with your package manager (test/container needs them)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-podman: podman and runc are missing; run as root (or: sudo apt-get install -y podman runc)" >&2
	exit 1
fi
echo "install-podman: installing podman and runc (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq podman runc >/dev/null
podman --version
