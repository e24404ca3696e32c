#!/bin/sh
# Selects what this container runs from SERVICE (one image for every service, see deploy/Dockerfile).
#   SERVICE=<service>  exec node services/<service>/src/main.ts (exec, so SIGTERM reaches node directly)
#   SERVICE=migrate    runs every service's migrate.ts in turn (each is idempotent; stops at the first failure)
set -eu

SERVICES="api-gateway sender inbound-smtp webhook-dispatcher scheduler domain-verifier"
# The repository root inside the image (/app); relative to this script so it runs from a checkout too.
cd "$(dirname "$0")/.."

case "${SERVICE:-}" in
  migrate)
    for svc in $SERVICES; do
      echo "migrating ${svc}" >&2
      node "services/${svc}/src/migrate.ts"
    done
    ;;
  api-gateway | sender | inbound-smtp | webhook-dispatcher | scheduler | domain-verifier)
    exec node "services/${SERVICE}/src/main.ts" "$@"
    ;;
  *)
    echo "SERVICE must be one of: ${SERVICES} migrate (got '${SERVICE:-}')" >&2
    exit 64
    ;;
esac
