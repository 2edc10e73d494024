# The operator image. Node 24 runs the TypeScript sources directly (type stripping), so the
# image holds the sources and the production dependencies, with no build step.
FROM node:24-bookworm-slim
WORKDIR /opt/etcd-operator
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY api ./api
COPY machines ./machines
COPY effects ./effects
COPY journal ./journal
COPY manager ./manager
COPY statechart ./statechart
# `kubectl exec deploy/etcd-operator -- etcd-operator journal NAME` (the chart's NOTES) needs it on PATH.
RUN printf '#!/bin/sh\nexec node /opt/etcd-operator/manager/cli.ts "$@"\n' > /usr/local/bin/etcd-operator \
 && chmod 755 /usr/local/bin/etcd-operator
# The journal lives on a volume mounted here (see the chart).
RUN mkdir -p /var/lib/etcd-operator && chown 65532:65532 /var/lib/etcd-operator
USER 65532:65532
ENTRYPOINT ["node", "manager/cli.ts"]
CMD ["manager"]
