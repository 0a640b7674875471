# syntax=docker/dockerfile:1
# Node 24 (active LTS; Node 20 is past its end of life), held at 24.18.1: from 24.19 on, an addon
# built on node::ObjectWrap (better-sqlite3 12) aborts when the garbage collector frees one of its
# statements ("Assertion failed: (env) != nullptr", nodejs/node#65446). Move to node:24-bookworm-slim
# once Node fixes it, or with better-sqlite3 13 (Node-API; it needs Node 22 or newer).
# Build stage: native modules (better-sqlite3) compile here; the TypeScript and the admin UI (with
# its .br/.gz files) are built.
ARG NODE_IMAGE=node:24.18.1-bookworm-slim
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
RUN mkdir -p /data && chown node:node /data
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
