# The operator image, for people who build with Docker. `make image` builds the same image
# without Docker (hack/image/): the same layout, user, entrypoint and command, kept in step by
# test/hack/image/dockerfile.test.ts. Its base differs: Debian's files Node needs instead of
# node:24-bookworm-slim (docs/install.md compares the two). Node 24 runs the TypeScript sources
# directly (type stripping), so the image holds the sources and the production dependencies,
# with no build step.
FROM node:24-bookworm-slim
WORKDIR /opt/etcd-operator
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY api ./api
COPY machines ./machines
COPY effects ./effects
COPY journal ./journal
COPY manager ./manager
COPY statechart ./statechart
COPY plugin ./plugin
# `kubectl exec deploy/etcd-operator -- etcd-operator journal NAME` (the chart's NOTES) needs it on PATH.
RUN chmod 755 manager/cli.ts && ln -s /opt/etcd-operator/manager/cli.ts /usr/local/bin/etcd-operator
# The journal lives on a volume mounted here (see the chart).
RUN mkdir -p /var/lib/etcd-operator && chown 65532:65532 /var/lib/etcd-operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/node", "/opt/etcd-operator/manager/cli.ts"]
CMD ["manager"]
