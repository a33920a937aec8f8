# syntax=docker/dockerfile:1
# The daemon's image: Node 22 LTS, the TypeScript compiled once at build time, production dependencies only,
# running as the unprivileged user node, uid:gid 1000:1000 (numeric, so Kubernetes' runAsNonRoot can check it) with its state on the /app/data volume. Build it with
#   docker build -t spot-bot --build-arg VERSION=$(node -p 'require("./package.json").version') \
#     --build-arg REVISION=$(git rev-parse HEAD) --build-arg SOURCE=<repository URL> .
# (the build args only label the image and let `bot --version` name the commit). README.md, "Docker", says more.
# That is the trading image (the last target); `--target research` builds the workers' image, which adds the research
# dependencies (docs/containers.md).

# package.json without its scripts (the lifecycle scripts npm ci runs are kept): the install below is keyed on
# what it installs, so a new or changed script (a bench:…) does not install and compile everything again.
FROM node:22-bookworm-slim AS manifest
COPY package.json /in/
RUN node -e "const p = require('/in/package.json'); p.scripts = Object.fromEntries(Object.entries(p.scripts ?? {}).filter(([k]) => /^(pre|post)?(install|prepare)$/.test(k))); require('fs').writeFileSync('/package.json', JSON.stringify(p, null, 2))"

FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
# better-sqlite3 compiles against the headers this image ships (/usr/local/include/node): the build downloads
# npm packages and nothing else, neither Node headers nor prebuilt binaries.
ENV npm_config_nodedir=/usr/local npm_config_build_from_source=true
COPY --from=manifest /package.json ./
COPY package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY package.json tsconfig.json tsconfig.build.json ./
COPY bin/build.js bin/sbom.js ./bin/
COPY src ./src
COPY strategies ./strategies
# `npm run build` checks the types, then bin/build.js makes the build that `npm start` and `bot` run in a checkout
# (dist/src, dist/strategies: each file transpiled by esbuild, the dashboard's files copied); only that build is
# kept. The compiled layout mirrors the sources (src/, strategies/); the package's exports (spot-bot/strategy, …) are
# pointed at the compiled files. A strategy folder mounted anywhere imports 'spot-bot/strategy' and zod, and the
# loader hands it the image's own. Of better-sqlite3's build only the addon is kept.
# Two node_modules: the research target's (every production dependency) and the trading image's, which leaves out
# the research dependencies the daemon never loads (RESEARCH_PACKAGES in src/ops/research-import.ts: Arrow and the
# Parquet writer of `bot data export`, BullMQ and ioredis of `bot worker` and a sweep's --queue); each with its own
# bill of materials. esbuild stays in both: tsx runs on it to load a TypeScript strategy mounted into the image.
RUN npm run build \
  && mkdir -p /out/data /out/research /out/trading && node bin/sbom.js /out/research/sbom.cdx.json \
  && npm prune --omit=dev --no-audit --no-fund \
  && cd node_modules/better-sqlite3 \
  && mv build/Release/better_sqlite3.node /tmp/ \
  && rm -rf build deps src \
  && mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/ \
  && cd /app && chmod +x dist/src/cli.js \
  && node -e "const p = require('./package.json'); for (const k of Object.keys(p.exports)) p.exports[k] = p.exports[k].replace(/^\.\/src\/(.*)\.ts$/, './src/\$1.js'); require('fs').writeFileSync('/out/package.json', JSON.stringify(p, null, 2))" \
  && cp -a node_modules /out/research/node_modules \
  && npm pkg delete $(node --input-type=module -e "const m = await import('./dist/src/ops/research-import.js'); console.log(m.RESEARCH_PACKAGES.map((p) => 'dependencies.' + p).join(' '))") \
  && npm prune --omit=dev --no-audit --no-fund \
  && node bin/sbom.js /out/trading/sbom.cdx.json --of /out/research/sbom.cdx.json
ARG REVISION=
RUN if [ -n "$REVISION" ]; then printf '{"revision":"%s"}\n' "$REVISION"; else echo '{}'; fi > /out/build-info.json

# What both images are: labels, settings, the code and shipped files, user, volume, ports, health check, entry
# point. Each target adds its node_modules and their bill of materials.
FROM node:22-bookworm-slim AS runtime
ARG VERSION=unknown
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="spot-bot" \
  org.opencontainers.image.description="Automated spot-trading daemon: strategies, journaled orders, paper trading, backtests" \
  org.opencontainers.image.version="$VERSION" \
  org.opencontainers.image.revision="$REVISION" \
  org.opencontainers.image.source="$SOURCE"
# NODE_COMPILE_CACHE: V8's code cache of the modules (Node 22.1+) in /tmp, so a `bot status` or a restart in the
# same container compiles little (the image runs src/cli.js itself, not bin/bot.js, which turns it on elsewhere).
# Health and metrics on a listener of their own, reachable from outside the container (publish 9464 for
# Prometheus or probes); the control API stays on loopback unless API_HOST and API_TOKEN say otherwise.
ENV NODE_ENV=production \
  NODE_COMPILE_CACHE=/tmp/node-compile-cache \
  PAPER_DATA=/app/samples \
  METRICS_HOST=0.0.0.0 \
  METRICS_PORT=9464
WORKDIR /app
# Code and shipped files stay root-owned (the bot cannot change them); only the data folder belongs to node.
COPY --from=build /app/dist/src ./src
COPY --from=build /app/dist/strategies ./strategies
COPY --from=build /app/dist/bundle ./bundle
COPY --from=build /out/build-info.json /out/package.json ./
COPY config ./config
# The samples live outside the data volume, so a host folder mounted on /app/data hides nothing shipped.
COPY data/samples ./samples
COPY data/README.md ./samples/README.md
COPY --from=build --chown=node:node /out/data ./data
RUN ln -s /app/src/cli.js /usr/local/bin/bot
# Numeric: runAsNonRoot cannot tell that a user name is not root; 1000:1000 is the base image's node user.
USER 1000:1000
VOLUME /app/data
# 9464: /healthz, /readyz, /metrics (METRICS_HOST:METRICS_PORT). 8080: the control API and dashboard
# (API_HOST:API_PORT), on 127.0.0.1 inside the container unless told otherwise.
EXPOSE 9464 8080
# Liveness: `bot healthcheck` asks /healthz on the metrics listener, on loopback inside the container (no token,
# no published port needed). It checks that the process and its loops answer, not that the exchange does.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "/app/src/cli.js", "healthcheck"]
# node runs as PID 1 and stops on SIGTERM itself, within STOP_TIMEOUT_MS (8 s: inside Docker's 10 s grace).
# V8's young generation capped as bin/bot.js's shebang caps it (README, peak RSS of a backtest).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/src/cli.js"]
CMD ["run"]

# The research image (`docker build --target research`): the trading image's files with every production
# dependency, for `bot worker`, a sweep's --queue and `bot data export --format arrow|parquet`.
FROM runtime AS research
COPY --from=build /out/research/node_modules ./node_modules
# The software bill of materials of node_modules as shipped (CycloneDX JSON, `npm run sbom`).
COPY --from=build /out/research/sbom.cdx.json ./

# The trading image, the default target: what the daemon runs and nothing more.
FROM runtime AS trading
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /out/trading/sbom.cdx.json ./
