# syntax=docker/dockerfile:1
# TestBackend: the Kestrel load-test backend (src/TestBackend), listening on 0.0.0.0:12007.
# Build context = repository root:
#   docker build -f tunnel2-deploy/docker/TestBackend.Dockerfile -t tunnel2/test-backend:dev .
#   docker run --rm -p 12007:12007 tunnel2/test-backend:dev

ARG DOTNET_VERSION=10.0
# The official images by default; a mirror or a base made elsewhere by build argument (--build-arg SDK_IMAGE=…).
# CI, where no registry serves them, builds Prebuilt.Dockerfile from a build made outside Docker instead.
ARG SDK_IMAGE=mcr.microsoft.com/dotnet/sdk:${DOTNET_VERSION}
ARG RUNTIME_IMAGE=mcr.microsoft.com/dotnet/aspnet:${DOTNET_VERSION}-alpine

# ---- build: SDK image, never shipped -------------------------------------------------------
FROM ${SDK_IMAGE} AS build
WORKDIR /repo
# Restore layer: only what restore reads, so source edits do not invalidate the package cache.
COPY global.json Directory.Build.props Directory.Packages.props .editorconfig ./
COPY src/Tunnel2.Protocol/Tunnel2.Protocol.csproj src/Tunnel2.Protocol/
COPY src/Tunnel2.Loops/Tunnel2.Loops.csproj src/Tunnel2.Loops/
COPY src/Tunnel2.Hosting/Tunnel2.Hosting.csproj src/Tunnel2.Hosting/
COPY src/TestBackend/TestBackend.csproj src/TestBackend/
RUN dotnet restore src/TestBackend/TestBackend.csproj
# Sources, then publish (framework-dependent, portable: runs on the Alpine runtime below).
COPY src/Tunnel2.Protocol/ src/Tunnel2.Protocol/
COPY src/Tunnel2.Loops/ src/Tunnel2.Loops/
COPY src/Tunnel2.Hosting/ src/Tunnel2.Hosting/
COPY src/TestBackend/ src/TestBackend/
RUN dotnet publish src/TestBackend/TestBackend.csproj -c Release --no-restore -o /app -p:UseAppHost=false

# ---- runtime: ASP.NET Core runtime on Alpine, no SDK ---------------------------------------
FROM ${RUNTIME_IMAGE} AS final
WORKDIR /app
COPY --from=build /app ./
# The image sets ASPNETCORE_HTTP_PORTS=8080; TestBackend listens where ASPNETCORE_URLS says.
ENV ASPNETCORE_URLS=http://0.0.0.0:12007 \
    ASPNETCORE_HTTP_PORTS=
EXPOSE 12007
# Non-root: the 'app' user (uid $APP_UID = 1654) that the .NET images define.
USER $APP_UID
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD wget -qO- http://127.0.0.1:12007/healthz >/dev/null || exit 1
ENTRYPOINT ["dotnet", "TestBackend.dll"]
