# syntax=docker/dockerfile:1
# TunnelClient (src/TunnelClient + Tunnel2.Protocol + Tunnel2.Balancing + Tunnel2.Hosting): dials the server's tunnel port and relays one
# session's requests to a backend. No port of its own. It references Microsoft.AspNetCore.App
# (System.IO.Pipelines etc.), so the runtime image is the ASP.NET Core one.
# Build context = repository root:
#   docker build -f tunnel2-deploy/docker/TunnelClient.Dockerfile -t tunnel2/tunnel-client:dev .
#   docker run --rm --network <net> -e TunnelClient__Server=http://tunnel_server:12001 \
#     -e TunnelClient__Session=22222222-2222-2222-2222-222222222222 -e TunnelClient__Token=... \
#     -e TunnelClient__Backends__Urls=http://test_backend:12007 \
#     -e TUNNEL2_PUBLIC_URL=http://tunnel_server:12000 tunnel2/tunnel-client:dev

ARG DOTNET_VERSION=10.0
# The official images by default; a mirror or a base made elsewhere by build argument (--build-arg SDK_IMAGE=…).
# CI, where no registry serves them, builds Prebuilt.Dockerfile from a build made outside Docker instead.
ARG SDK_IMAGE=mcr.microsoft.com/dotnet/sdk:${DOTNET_VERSION}
ARG RUNTIME_IMAGE=mcr.microsoft.com/dotnet/aspnet:${DOTNET_VERSION}-alpine

# ---- build: SDK image, never shipped -------------------------------------------------------
FROM ${SDK_IMAGE} AS build
WORKDIR /repo
# Restore layer: the project files of TunnelClient and of everything it references.
COPY global.json Directory.Build.props Directory.Packages.props .editorconfig ./
COPY src/Tunnel2.Protocol/Tunnel2.Protocol.csproj src/Tunnel2.Protocol/
COPY src/Tunnel2.Balancing/Tunnel2.Balancing.csproj src/Tunnel2.Balancing/
COPY src/Tunnel2.Hosting/Tunnel2.Hosting.csproj src/Tunnel2.Hosting/
COPY src/Tunnel2.Loops/Tunnel2.Loops.csproj src/Tunnel2.Loops/
COPY src/TunnelClient/TunnelClient.csproj src/TunnelClient/
RUN dotnet restore src/TunnelClient/TunnelClient.csproj
# Sources, then publish (framework-dependent, portable: runs on the Alpine runtime below).
COPY src/Tunnel2.Protocol/ src/Tunnel2.Protocol/
COPY src/Tunnel2.Balancing/ src/Tunnel2.Balancing/
COPY src/Tunnel2.Hosting/ src/Tunnel2.Hosting/
COPY src/Tunnel2.Loops/ src/Tunnel2.Loops/
COPY src/TunnelClient/ src/TunnelClient/
RUN dotnet publish src/TunnelClient/TunnelClient.csproj -c Release --no-restore -o /app -p:UseAppHost=false

# ---- runtime: ASP.NET Core runtime on Alpine, no SDK ---------------------------------------
FROM ${RUNTIME_IMAGE} AS final
WORKDIR /app
COPY --from=build /app ./
# TUNNEL2_PUBLIC_URL (the server's public base URL, e.g. http://tunnel_server:12000) is used only by
# the health check below; without it the check only asks whether the client process is alive.
ENV TUNNEL2_PUBLIC_URL=
# Non-root: the 'app' user (uid $APP_UID = 1654) that the .NET images define.
USER $APP_UID
# Healthy = a request through the server for this client's session reaches its backend's /healthz
# (TunnelClient__Session must then be set in the environment).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD if [ -n "$TUNNEL2_PUBLIC_URL" ]; then \
        wget -qO- "$TUNNEL2_PUBLIC_URL/session/$TunnelClient__Session/healthz" >/dev/null; \
      else kill -0 1; fi || exit 1
ENTRYPOINT ["dotnet", "TunnelClient.dll"]
