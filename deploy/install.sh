#!/usr/bin/env bash
# Installs Cairn on this machine as a service: the release binary as /usr/local/bin/cairn (on the PATH), the web app
# and its client library in /usr/local/share/cairn (where the binary finds them), the configuration
# /etc/cairn/cairn.toml (from deploy/cairn.example.toml, kept if it exists: its data directory is /var/lib/cairn),
# and the systemd unit deploy/cairn.service, which systemd gives the data directory /var/lib/cairn (StateDirectory)
# and runs as a user of its own. Then every command finds the hub's data with `--config /etc/cairn/cairn.toml`
# (or CAIRN_CONFIG=/etc/cairn/cairn.toml), wherever it runs. Needs root. Usage, from a clone:
#   bash deploy/install.sh            # build, install, enable and start the service
#   bash deploy/install.sh --no-start # install only (e.g. to edit /etc/cairn/cairn.toml first)
# PREFIX (default /usr/local) and DESTDIR (default empty: install into a staging root, nothing enabled) are honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
start=1
[ "${1:-}" = "--no-start" ] && start=0
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
if [ -z "$DESTDIR" ] && [ "$(id -u)" -ne 0 ]; then
  echo "deploy/install.sh: run as root (it writes $PREFIX, /etc/cairn and /etc/systemd/system)" >&2
  exit 1
fi

if [ -z "${CAIRN_BINARY:-}" ]; then
  bash deploy/install-deps.sh
  swift build -c release --product cairn
  CAIRN_BINARY="$(swift build -c release --show-bin-path)/cairn"
fi

install -D -m 0755 "$CAIRN_BINARY" "$DESTDIR$PREFIX/bin/cairn"
rm -rf "$DESTDIR$PREFIX/share/cairn/web" "$DESTDIR$PREFIX/share/cairn/clients/js"
install -d "$DESTDIR$PREFIX/share/cairn/clients"
cp -r web "$DESTDIR$PREFIX/share/cairn/web"
cp -r clients/js "$DESTDIR$PREFIX/share/cairn/clients/js"
install -d "$DESTDIR/etc/cairn"
if [ ! -e "$DESTDIR/etc/cairn/cairn.toml" ]; then
  install -m 0644 deploy/cairn.example.toml "$DESTDIR/etc/cairn/cairn.toml"
fi
install -d "$DESTDIR/etc/systemd/system"
sed "s#/usr/local/bin/cairn#$PREFIX/bin/cairn#g" deploy/cairn.service >"$DESTDIR/etc/systemd/system/cairn.service"
"$DESTDIR$PREFIX/bin/cairn" config check "$DESTDIR/etc/cairn/cairn.toml"

echo "deploy/install.sh: installed $PREFIX/bin/cairn, $PREFIX/share/cairn/, /etc/cairn/cairn.toml and the cairn unit"
if [ -n "$DESTDIR" ]; then exit 0; fi
if [ "$start" -eq 1 ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now cairn
  echo "deploy/install.sh: started; data in /var/lib/cairn; logs: journalctl -u cairn"
else
  echo "deploy/install.sh: not started (no running systemd, or --no-start): systemctl daemon-reload && systemctl enable --now cairn"
fi
echo "deploy/install.sh: account commands: cairn user list --config /etc/cairn/cairn.toml"
