#!/usr/bin/env bash
# Submits the freqcap job jar to a Flink cluster through its REST API (jar upload: the
# cluster needs web.submit.enable: true, Flink's default; bin/freqcap-cluster turns it off).
#   deploy/submit-rest.sh http://jobmanager:8081 --bootstrap-servers k:9092 \
#     --limits s3://.../limits.json --segment-uris s3://acme-segments/
set -euo pipefail
rest="${1:?usage: $0 http://jobmanager:8081 [job options...]}"
shift
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$(ls "$here"/job/target/freqcap-job-*.jar | grep -v original | head -n 1)"

upload="$(curl -sf -X POST -F "jarfile=@${jar}" "${rest}/jars/upload")"
jar_id="$(printf '%s' "$upload" | sed -n 's/.*"filename":"[^"]*\/\([^"\/]*\)".*/\1/p')"
[ -n "$jar_id" ] || { echo "upload failed: $upload" >&2; exit 1; }

args="$(printf '%s\n' "$@" | python3 -c 'import json,sys; print(json.dumps([l.rstrip("\n") for l in sys.stdin]))')"
curl -sf -X POST -H 'Content-Type: application/json' \
  -d "{\"entryClass\": \"io.freqcap.job.FreqcapMain\", \"programArgsList\": ${args}}" \
  "${rest}/jars/${jar_id}/run"
echo
