# syntax=docker/dockerfile:1
# TunnelServer (src/TunnelServer + ProxyEntry + Tunnel2.Protocol + Tunnel2.Balancing + Tunnel2.Hosting): public HTTP on 0.0.0.0:12000,
# tunnel (uplink) listener on 0.0.0.0:12001. The token has no default in Production: pass it.
# Build context = repository root:
#   docker build -f tunnel2-deploy/docker/TunnelServer.Dockerfile -t tunnel2/tunnel-server:dev .
#   docker run --rm -p 12000:12000 -p 12001:12001 -e TunnelServer__Token=<token> tunnel2/tunnel-server:dev

ARG DOTNET_VERSION=10.0
# The official images by default; a mirror or a base made elsewhere by build argument (--build-arg SDK_IMAGE=…).
# CI, where no registry serves them, builds Prebuilt.Dockerfile from a build made outside Docker instead.
ARG SDK_IMAGE=mcr.microsoft.com/dotnet/sdk:${DOTNET_VERSION}
ARG RUNTIME_IMAGE=mcr.microsoft.com/dotnet/aspnet:${DOTNET_VERSION}-alpine

# ---- build: SDK image, never shipped -------------------------------------------------------
FROM ${SDK_IMAGE} AS build
WORKDIR /repo
# Restore layer: the project files of TunnelServer and of everything it references.
COPY global.json Directory.Build.props Directory.Packages.props .editorconfig ./
COPY src/Tunnel2.Protocol/Tunnel2.Protocol.csproj src/Tunnel2.Protocol/
COPY src/Tunnel2.Loops/Tunnel2.Loops.csproj src/Tunnel2.Loops/
COPY src/Tunnel2.Balancing/Tunnel2.Balancing.csproj src/Tunnel2.Balancing/
COPY src/Tunnel2.Hosting/Tunnel2.Hosting.csproj src/Tunnel2.Hosting/
COPY src/ProxyEntry/ProxyEntry.csproj src/ProxyEntry/
COPY src/TunnelServer/TunnelServer.csproj src/TunnelServer/
RUN dotnet restore src/TunnelServer/TunnelServer.csproj
# Sources, then publish (framework-dependent, portable: runs on the Alpine runtime below).
COPY src/Tunnel2.Protocol/ src/Tunnel2.Protocol/
COPY src/Tunnel2.Loops/ src/Tunnel2.Loops/
COPY src/Tunnel2.Balancing/ src/Tunnel2.Balancing/
COPY src/ProxyEntry/ src/ProxyEntry/
COPY src/Tunnel2.Hosting/ src/Tunnel2.Hosting/
COPY src/TunnelServer/ src/TunnelServer/
RUN dotnet publish src/TunnelServer/TunnelServer.csproj -c Release --no-restore -o /app -p:UseAppHost=false

# ---- runtime: ASP.NET Core runtime on Alpine, no SDK ---------------------------------------
FROM ${RUNTIME_IMAGE} AS final
WORKDIR /app
COPY --from=build /app ./
# Listen on every interface inside the container. The server binds exactly these two endpoints;
# clearing ASPNETCORE_HTTP_PORTS (8080 in the base image) avoids a misleading override warning.
ENV TunnelServer__Listeners__PublicUrl=http://0.0.0.0:12000 \
    TunnelServer__Listeners__TunnelUrl=http://0.0.0.0:12001 \
    ASPNETCORE_HTTP_PORTS=
EXPOSE 12000 12001
# Non-root: the 'app' user (uid $APP_UID = 1654) that the .NET images define.
USER $APP_UID
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD wget -qO- http://127.0.0.1:12000/healthz >/dev/null || exit 1
ENTRYPOINT ["dotnet", "TunnelServer.dll"]
