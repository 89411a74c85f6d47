#!/usr/bin/env bash
# The container test (issue 26; .ci/run runs it): builds the real Containerfile with podman on a stand-in for the
# official Node 24 image (no registry here: ci-services.md, "Containers"), then runs the image as a self-hoster would:
# on the embedded database and on the host's PostgreSQL and Redis, a key made with `dcgate` inside the container, a
# conversion stored and still there after a restart on the same volume, a non-root process, a clean exit on SIGTERM
# within 10 s. It prints the image size and checks compose.yaml with Compose v2's `config`.
# Needs: podman runc mmdebstrap curl psql, PostgreSQL and Redis on 127.0.0.1. Downloads are cached for the day in
# $DCGATE_CI_CACHE (default /var/tmp/dcgate-ci); containers, images and volumes it made are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
source test/container/lib.sh

CACHE=${DCGATE_CI_CACHE:-/var/tmp/dcgate-ci}
DAY=$(date -u +%F)
RUN=$$
BASE=docker.io/library/node:24-bookworm-slim
IMAGE=localhost/dcgate-ci:$RUN
VOLUME=dcgate-ci-data-$RUN
PG_URL=${CI_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
REDIS=${CI_REDIS_URL:-redis://127.0.0.1:6379}
DB=dcgate_ci_container_$RUN
DB_URL="${PG_URL%/*}/$DB"
CONTAINERS=()
mkdir -p "$CACHE/$DAY"

cleanup() {
  for c in "${CONTAINERS[@]}"; do pm rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  pm volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  pm rmi -f "$IMAGE" >/dev/null 2>&1 || true
  # The build's first stage (production dependencies) stays as an untagged image: remove those made since the base.
  if pm image exists "$BASE"; then pm images -q --filter dangling=true --filter since="$BASE" | xargs -r podman --runtime runc --cgroup-manager cgroupfs rmi -f >/dev/null 2>&1 || true; fi
  pm rmi -f "$BASE" localhost/dcgate-ci-debian-minbase:bookworm >/dev/null 2>&1 || true
  psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  [ -z "${CONTEXT:-}" ] || remove_dir "$CONTEXT"
}
trap cleanup EXIT

echo "== stand-in base image $BASE (Debian bookworm minbase, Node.js 24 and npm 11 from the npm registry)"
fetch_rootfs
fetch_node
prune_cache
pm import --quiet "$CACHE/$DAY/bookworm-minbase.tar" localhost/dcgate-ci-debian-minbase:bookworm >/dev/null
CONTEXT=$(mktemp -d)
cp "$CACHE/$DAY/node" "$CONTEXT/node"
cp -r "$CACHE/$DAY/npm" "$CONTEXT/npm"
cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$CONTEXT/host-ca.crt"
chmod 0755 "$CONTEXT/node" && chmod 0644 "$CONTEXT/host-ca.crt"
pm build --quiet --pull=never --format docker "${RUN_FLAGS[@]}" -f test/container/base.Containerfile -t "$BASE" "$CONTEXT" >/dev/null

echo "== podman build of ./Containerfile"
started=$SECONDS
pm build --pull=never --format docker "${RUN_FLAGS[@]}" -f Containerfile -t "$IMAGE" . | grep -E '^(STEP|COMMIT|Successfully)' || true
pm image exists "$IMAGE" || { echo "the image was not built" >&2; exit 1; }
mb() { pm image inspect "$1" --format '{{.Size}}' | awk '{ printf "%.0f MB", $1 / 1000000 }'; }
echo "built in $((SECONDS - started)) s; image size: $(mb "$IMAGE") (the stand-in base: $(mb "$BASE"))"
check "the image keeps its HEALTHCHECK on /livez" test -n "$(pm image inspect "$IMAGE" --format '{{json .Config.Healthcheck}}' | grep /livez)"
check "the image runs as a user other than root" test "$(pm image inspect "$IMAGE" --format '{{.Config.User}}')" = node

# start NAME PORT [env...]: a detached container of the image on the shared volume, listening on 127.0.0.1:PORT.
start() {
  local name=$1 port=$2; shift 2
  CONTAINERS+=("$name")
  pm run -d --name "$name" "${RUN_FLAGS[@]}" -v "$VOLUME:/data" -e HOST=127.0.0.1 -e PORT="$port" "${@/#/-e}" "$IMAGE" >/dev/null
}
# dcgate NAME args...: the `dcgate` command inside the running container.
dcgate() { local name=$1; shift; pm exec "$name" node bin/dcgate.mjs "$@"; }
# convert URL KEY MESSAGE_ID: sends one conversion; prints the answer.
convert() {
  curl -s -X POST "$1/api/v1/conversions/automation" -H "x-dc-key: $2" -H 'content-type: application/json' \
    -d "{\"event\":\"Purchase\",\"messageId\":\"$3\",\"properties\":{\"value\":49.9,\"currency\":\"EUR\"},\"context\":{\"traits\":{\"email\":\"ann@example.com\"}}}"
}
# stop_within NAME SECONDS: SIGTERM, then the container must have exited 0 by itself in time (podman stop would
# SIGKILL it at the limit, exit code 137).
stop_within() {
  local t0=$SECONDS
  pm stop -t "$2" "$1" >/dev/null
  local took=$((SECONDS - t0)) code; code=$(pm inspect "$1" --format '{{.State.ExitCode}}')
  echo "       SIGTERM to exit: ${took} s, exit code $code"
  [ "$code" = 0 ] && [ "$took" -lt "$2" ]
}

echo "== embedded database, data in volume $VOLUME"
PORT1=$(free_port); URL1=http://127.0.0.1:$PORT1
start dcgate-ci-embedded-$RUN "$PORT1"
check "starts on the embedded database and /readyz answers 200" wait_ready "$URL1" 180
pid=$(pm inspect dcgate-ci-embedded-$RUN --format '{{.State.Pid}}')
check "the server process runs as uid 1000, not root" test "$(stat -c %u "/proc/$pid")" = 1000
check "the HEALTHCHECK passes (node -e fetch /livez)" pm healthcheck run dcgate-ci-embedded-$RUN
KEY=$(dcgate dcgate-ci-embedded-$RUN keys create --site demo --name ci | grep -o 'dcp_[A-Za-z0-9_-]*' | head -n 1)
check "dcgate keys create inside the container prints a key" test -n "$KEY"
check "the key works on /api/v1/export/health" test "$(curl -s -o /dev/null -w '%{http_code}' -H "x-dc-key: $KEY" "$URL1/api/v1/export/health")" = 200
check "a conversion is stored" grep -q '"success":true' <<<"$(convert "$URL1" "$KEY" ci-order-1)"
COP_KEY=$(pm logs dcgate-ci-embedded-$RUN 2>&1 | grep -o 'cop_key=cop_[A-Za-z0-9_-]*' | head -n 1)
check "the tracking script is built and served (esbuild in the image)" grep -q '^200 .*javascript' <<<"$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$URL1/script?$COP_KEY")"
check "SIGTERM: drains and exits 0 within 10 s" stop_within dcgate-ci-embedded-$RUN 10

echo "== a new container on the same volume"
start dcgate-ci-restarted-$RUN "$PORT1"
check "starts again and /readyz answers 200" wait_ready "$URL1" 180
check "the key made before the restart still works" test "$(curl -s -o /dev/null -w '%{http_code}' -H "x-dc-key: $KEY" "$URL1/api/v1/export/health")" = 200
check "the conversion stored before the restart is still there (a repeat is skipped)" grep -q duplicate_delivery_skipped <<<"$(convert "$URL1" "$KEY" ci-order-1)"
check "SIGTERM: drains and exits 0 within 10 s" stop_within dcgate-ci-restarted-$RUN 10

echo "== the host's PostgreSQL ($DB) and Redis"
psql "$PG_URL" -qc "CREATE DATABASE $DB" >/dev/null
PORT2=$(free_port); URL2=http://127.0.0.1:$PORT2
start dcgate-ci-postgres-$RUN "$PORT2" "DATABASE_URL=$DB_URL" "REDIS_URL=$REDIS"
check "starts on PostgreSQL and Redis and /readyz answers 200" wait_ready "$URL2" 180
KEY2=$(dcgate dcgate-ci-postgres-$RUN keys create --site demo --name ci | grep -o 'dcp_[A-Za-z0-9_-]*' | head -n 1)
check "a key made inside the container works" test "$(curl -s -o /dev/null -w '%{http_code}' -H "x-dc-key: $KEY2" "$URL2/api/v1/export/health")" = 200
check "a conversion is accepted" grep -q '"success":true' <<<"$(convert "$URL2" "$KEY2" ci-order-2)"
check "the conversion is in PostgreSQL" test "$(psql "$DB_URL" -Atc "select count(*) from conversions where message_id = 'ci-order-2'")" = 1
check "SIGTERM: drains and exits 0 within 10 s" stop_within dcgate-ci-postgres-$RUN 10

echo "== compose.yaml, checked by Compose v2 (Debian trixie's docker-compose)"
fetch_compose
COMPOSE="$CACHE/$DAY/compose/usr/libexec/docker/cli-plugins/docker-compose"
check "docker compose config accepts compose.yaml" env DCGATE_DOMAIN=dcgate.example ACME_EMAIL=ops@dcgate.example POSTGRES_PASSWORD=ci "$COMPOSE" -f compose.yaml config --quiet
check "docker compose config refuses it without POSTGRES_PASSWORD" bash -c "! env -u POSTGRES_PASSWORD DCGATE_DOMAIN=d.example ACME_EMAIL=a@d.example '$COMPOSE' -f compose.yaml config --quiet 2>/dev/null"
if command -v caddy >/dev/null; then
  check "caddy validates compose's Caddyfile" bash -c 'DCGATE_DOMAIN=dcgate.example ACME_EMAIL=ops@dcgate.example caddy validate --config docs/deployment/Caddyfile.compose --adapter caddyfile >/dev/null 2>&1'
fi

if [ "$FAILED" -gt 0 ]; then echo "container test: $FAILED check(s) failed"; exit 1; fi
echo "container test: every check passed"
