# syntax=docker/dockerfile:1
# Switchyard gateway image: `docker build -t switchyard .` (docs/deployment.md).
# test/integration/deploy-image.test.ts parses this file and carries its stages out without Docker.

# --- build: the install and compile steps CI runs (.ci/run), nothing else ----------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /build
# The lock file first, so that the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# `npm run build` compiles the gateway and builds the web console (dist/console).
RUN npm run build

# --- runtime: production dependencies and the compiled JavaScript, no sources and no compiler ---------
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# The gateway's trees of dist/ by name: what `npm run build` (tsconfig.build.json) emits, and nothing else.
COPY --from=build /build/dist/src dist/src
COPY --from=build /build/dist/modules dist/modules
COPY --from=build /build/dist/events dist/events
COPY --from=build /build/dist/projections dist/projections
COPY --from=build /build/dist/migrations dist/migrations
# The web console's built assets (Vite, from console/), served at /console.
COPY --from=build /build/dist/console dist/console
# The CLI entry and its build check (with no tsconfig.json here it runs the build as it is), and the
# OpenAPI document the gateway serves at /docs.
COPY bin bin
COPY scripts/ensure-build.mjs scripts/ensure-build.mjs
COPY docs/openapi.json docs/openapi.json
# A fixed uid, so that a volume's ownership (and a Kubernetes securityContext) can name it.
RUN groupadd --system --gid 10001 switchyard \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/switchyard --no-create-home --shell /usr/sbin/nologin switchyard \
 && mkdir -p /var/lib/switchyard \
 && chown 10001:10001 /var/lib/switchyard
# HOST: a container's port is reached through its own interface, not loopback. SWITCHYARD_DATA_DIR: the
# embedded store (without DATABASE_URL), the outage spool (with it) and secrets/ live there. The malloc
# settings are the ones `npm start` gives a serving process (src/cli/serving-flags.ts, SERVING_ENV).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SWITCHYARD_DATA_DIR=/var/lib/switchyard \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
VOLUME ["/var/lib/switchyard"]
USER 10001:10001
EXPOSE 8080
# SIGTERM starts the graceful shutdown (SWITCHYARD_SHUTDOWN_DEADLINE_MS, default 30 s, then 5 s to settle):
# give `docker stop` a --time above that (compose.yaml sets stop_grace_period).
STOPSIGNAL SIGTERM
# Readiness, not liveness: 503 while the node cannot serve correctly. The slim image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The V8 flags of `npm start` (NODE_FLAGS in src/cli/serving-flags.ts; Node refuses them in NODE_OPTIONS).
# node is PID 1 and receives SIGTERM itself. Other commands: `docker run IMAGE keys issue --tenant T`.
ENTRYPOINT ["node", "--max-semi-space-size=32", "--single-threaded-gc", "--no-allocation-site-pretenuring", "bin/switchyard.js"]
CMD ["serve"]
