# syntax=docker/dockerfile:1
# Node 24 (active LTS; Node 20 is past its end of life), pinned to the release the suite last ran
# on. On Node 22 and later Lectern loads better-sqlite3 13 (Node-API, prebuilt); better-sqlite3 12
# is installed too, for Node 20 only (lib/sqlite-driver.ts says why), and compiles here.
# Build stage: native modules (better-sqlite3) compile here; the TypeScript and the admin UI (with
# its .br/.gz files) are built.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

# Runtime stage: compiled JavaScript, production dependencies, examples and the admin build only.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    CMS_DATA_DIR=/data \
    CMS_PORT=3000
WORKDIR /app
# /shared: where docker-compose.replicas.yml mounts the volume the replicas share (types and
# assets); made here so a new named volume starts owned by `node`.
RUN mkdir -p /data /shared && chown node:node /data /shared
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/examples ./examples
COPY --from=build --chown=node:node /app/admin/dist ./admin/dist
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.CMS_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node is PID 1's child of nothing: it receives SIGTERM directly and shuts down gracefully.
CMD ["node", "dist/server.js"]
