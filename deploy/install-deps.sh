#!/usr/bin/env bash
# Installs the system packages Cairn builds and runs against, if any are missing: libwebsockets (WebSocket, HTTP
# and TLS) with libev and its libev event-loop plugin (the hub's epoll loop), liburing (a loop turn's frames in one
# io_uring submission), OpenSSL's libcrypto (scrypt, SHA-256, secure random), SQLite, hiredis (the Redis client
# when several nodes share state), libpq (the PostgreSQL client: the store several nodes share), pkg-config to find
# them, the openssl command (the TLS tests make a self-signed certificate with it), and the browser libraries the
# hub serves to its web app under /vendor/ (Leaflet with its marker clusters, Chart.js).
# Used by the README's run command and by .ci/run. Needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(libwebsockets-dev libev-dev libwebsockets-evlib-ev liburing-dev libssl-dev libsqlite3-dev libhiredis-dev
  libpq-dev pkg-config openssl libjs-leaflet libjs-leaflet.markercluster libjs-chart.js)
# Extra packages may be requested by callers (e.g. loadtest/compare.sh adds the mosquitto broker and
# libmosquitto1, the MQTT client library the load tester loads at run time).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deploy/install-deps.sh: all system packages present (${packages[*]})"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "deploy/install-deps.sh: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "deploy/install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
