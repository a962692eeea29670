# An image from a build made outside Docker (dotnet publish: Native AOT or self-contained, so the base needs no .NET),
# on a base image given as a build argument. This is what CI builds (tunnel2-deploy/dev/compose-test.sh), where no
# registry serves the official .NET images: its base is a Debian root file system made here with debootstrap. Users
# build the other Dockerfiles in this folder, on the official images.
#
# Build context: a folder holding the published application in APP_DIR, e.g.
#   docker build -f Prebuilt.Dockerfile --build-arg BASE=tunnel2/base:bookworm --build-arg APP_DIR=TunnelServer \
#     --build-arg APP=TunnelServer --build-arg PORT=12000 -t tunnel2/tunnel-server:ci <publish folder>
ARG BASE=debian:bookworm-slim
FROM ${BASE}
ARG APP_DIR
ARG APP
# The port /healthz answers on, for the health check.
ARG PORT
COPY ${APP_DIR}/ /app/
WORKDIR /app
ENV APP=${APP} \
    HEALTH_PORT=${PORT} \
    DOTNET_gcServer=0
# Non-root, the same uid as the official .NET images' 'app' user.
USER 1654:1654
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=12 \
  CMD wget -qO- "http://127.0.0.1:${HEALTH_PORT}/healthz" >/dev/null || exit 1
ENTRYPOINT ["/bin/sh", "-c", "exec \"/app/$APP\" \"$@\"", "--"]
