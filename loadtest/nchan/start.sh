#!/usr/bin/env bash
# Starts nginx with the nchan module for the load tester, in the foreground (exec: the caller's pid is the master's):
#   loadtest/nchan/start.sh PORT DIR
# DIR is a scratch directory: the configuration made from nginx.conf.in, the pid file, logs and temporary files go
# there. Needs Debian's nginx and libnginx-mod-nchan (loadtest/compare.sh installs them).
set -euo pipefail
port=${1:?usage: start.sh PORT DIR}
dir=${2:?usage: start.sh PORT DIR}
if ! [[ $port =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
  echo "start.sh: bad port '$port'" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# The directory goes into sed and into nginx's configuration unquoted: plain path characters only.
if ! [[ $dir =~ ^[A-Za-z0-9_./+-]+$ ]]; then
  echo "start.sh: use a directory path of letters, digits and _./+- only" >&2
  exit 2
fi
sed -e "s#@PORT@#$port#g" -e "s#@DIR@#$dir#g" "$(dirname "$0")/nginx.conf.in" > "$dir/nginx.conf"
exec nginx -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf"
