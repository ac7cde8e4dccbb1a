#!/usr/bin/env bash
# Installs every build and test dependency of Tessel from Debian's archive. Idempotent: packages
# already present are skipped by apt-get. Needs root (or sudo) and Debian's package mirror only.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libsystemc-dev verilator llvm-16-dev clang-16 libclang-rt-16-dev
  libboost-dev libgtest-dev libgmock-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev libssl-dev
  python3 python3-onnx python3-numpy
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
