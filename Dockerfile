# syntax=docker/dockerfile:1
# Minimal image for now: a later issue adds metrics, the health check and the full ops story.
# Node 22 is the LTS line the project targets in containers (Node 20.19+ is supported for development).

FROM node:22-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source where no prebuilt binary can be fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY strategies ./strategies
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
COPY data/README.md ./data/README.md
COPY data/samples ./data/samples
RUN chown -R node:node /app/data
USER node
# node runs as PID 1 and handles SIGTERM itself (graceful shutdown in the daemon).
CMD ["node", "dist/src/cli.js", "run"]
