#!/usr/bin/env bash
# The module graph of docs/ARCHITECTURE.md, checked: each module may import only the Cairn modules (and C shims)
# listed for it here, so a layer cannot quietly start to know another (the domain JSON, the transport the hub).
# Modules not listed (the composition, benchmarks) may import any. Run from the repository root; exits 1 and names
# every file that imports what its module may not.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [CairnLoop]=""
  [CairnGeo]=""
  [CairnErrorCodes]=""
  [CairnWire]="CairnErrorCodes"
  [CairnSeed]=""
  [CairnSpatial]="CairnGeo"
  [CairnCrypto]="COpenSSL"
  [CairnCore]="CairnLoop CairnGeo CairnErrorCodes"
  [CairnSessions]="CairnCore CairnLoop CairnCrypto CairnErrorCodes"
  [CairnAdmin]="CairnCore CairnLoop CairnSessions CairnErrorCodes"
  [CairnMedia]="CairnCore CairnSessions CairnAdmin CairnCrypto CairnErrorCodes"
  [CairnPlaces]="CairnCore CairnLoop CairnGeo CairnSpatial CairnErrorCodes"
  [CairnSocial]="CairnCore CairnSessions CairnErrorCodes"
  [CairnLiveMap]="CairnCore CairnLoop CairnGeo CairnSpatial CairnSessions CairnSocial"
  [CairnRelics]="CairnCore CairnLoop CairnGeo CairnSpatial CairnSessions CairnSocial CairnLiveMap CairnMedia CairnErrorCodes"
  [CairnChat]="CairnCore CairnSocial CairnAdmin CairnErrorCodes CairnSessions"
  [CairnProfiles]="CairnCore CairnLoop CairnSessions CairnMedia CairnErrorCodes"
  [CairnBuckets]="CairnCore CairnSocial CairnMedia CairnErrorCodes CairnSessions"
  [CairnTrackers]="CairnCore CairnLoop CairnGeo CairnSpatial CairnCrypto CairnSessions CairnLiveMap CairnBuckets CairnErrorCodes"
  [CairnPictures]="CairnCore CairnLoop CairnGeo CairnCrypto CairnSessions CairnSocial CairnLiveMap CairnAdmin CairnMedia CairnErrorCodes"
  [CairnStats]="CairnCore CairnLoop CairnSessions CairnLiveMap CairnErrorCodes"
  [CairnHub]="CairnCore CairnLoop CairnCrypto CairnSessions CairnAdmin CairnMedia CairnPlaces CairnSocial CairnLiveMap CairnRelics CairnChat CairnProfiles CairnBuckets CairnTrackers CairnPictures CairnStats"
  [CairnProtocol]="CairnLoop CairnWire CairnCore CairnSessions CairnAdmin CairnMedia CairnPlaces CairnSocial CairnLiveMap CairnRelics CairnChat CairnProfiles CairnBuckets CairnTrackers CairnPictures CairnStats CairnHub CairnErrorCodes CairnGeo"
  [CairnSQL]="CairnCore CairnSessions CairnAdmin CairnPlaces CairnSocial CairnRelics CairnChat CairnProfiles CairnBuckets CairnTrackers CairnPictures CairnGeo"
  [CairnStore]="CairnCrypto CairnSQL CairnCore CairnSessions CairnAdmin CairnMedia CairnPlaces CairnSocial CairnRelics CairnChat CairnProfiles CairnBuckets CairnTrackers CairnPictures"
  [CairnPostgres]="CairnCrypto CPostgres CairnSQL CairnCore CairnSessions CairnAdmin CairnMedia CairnPlaces CairnSocial CairnRelics CairnChat CairnProfiles CairnBuckets CairnTrackers CairnPictures"
  [CairnServer]="CLws CUring CairnLoop CairnWire"
  [CairnMetrics]="CairnCore CairnTrackers"
  [CairnClient]="CLws"
  [CairnCluster]="CairnLoop CHiredis"
  [CairnNodes]="CairnCluster CairnLoop CairnCrypto CairnCore CairnSessions CairnAdmin CairnSocial CairnLiveMap CairnRelics CairnBuckets CairnTrackers CairnPictures CairnStats CairnHub CairnProtocol"
  [CairnConfig]="CairnApp CairnCrypto CairnCore CairnServer CairnSessions"
  [cairn]="CairnApp CairnConfig CairnClient CairnAdmin CairnCore CairnPlaces CairnServer CairnSessions"
)

status=0
for module in "${!allowed[@]}"; do
  dir="Sources/$module"
  [ -d "$dir" ] || { echo "layers: no $dir"; status=1; continue; }
  while IFS=: read -r file imported; do
    case " ${allowed[$module]} " in
      *" $imported "*) ;;
      *) echo "layers: $file imports $imported, which $module may not"; status=1 ;;
    esac
  done < <(grep -rHoE '^(@testable |@_exported )?((public|package|internal) )?import (Cairn[A-Za-z]*|CLws|COpenSSL|CLibSSL|CMosquitto|CHiredis|CPostgres)\b' \
             "$dir" --include='*.swift' | sed -E 's/:(@testable |@_exported )?((public|package|internal) )?import /:/')
done
[ "$status" -eq 0 ] && echo "layers: every module imports only what docs/ARCHITECTURE.md allows"
exit "$status"
