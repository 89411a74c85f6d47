# dcgate's container image (docs/deployment.md). `Dockerfile` is this same file, for tools that look for that name.
# Node.js 24 runs dcgate's TypeScript sources as they are (type stripping): no build step, so the image holds the
# sources and their production dependencies, nothing else.
#
#   docker build -t dcgate .
#   docker run -p 3000:3000 -v dcgate-data:/data dcgate

# Production dependencies only, installed exactly as package-lock.json pins them.
FROM docker.io/library/node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM docker.io/library/node:24-bookworm-slim
# PORT, HOST, DATABASE_URL, REDIS_URL, DCGATE_DATA_DIR and DCGATE_ADMIN_TOKEN win over the config file.
# DCGATE_CONFIG names the config file; mount yours over /app/config (or point DCGATE_CONFIG at it).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DCGATE_DATA_DIR=/data \
    DCGATE_CONFIG=/app/config/dcgate.config.ts
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json dcgate.ts ./
COPY bin ./bin
COPY core ./core
COPY adapters ./adapters
COPY plugins ./plugins
COPY config ./config
# Everything dcgate writes (embedded database, admin token, capture journal, dead letters, intel lists) is under /data,
# owned by the unprivileged `node` user (uid 1000) the official image provides.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# No curl in the slim image: Node's own fetch asks /livez.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 (no npm, no shell in between): SIGTERM reaches dcgate, which stops taking requests, lets
# in-flight ones finish and closes within 10 s.
STOPSIGNAL SIGTERM
CMD ["node", "bin/dcgate.mjs", "start"]
