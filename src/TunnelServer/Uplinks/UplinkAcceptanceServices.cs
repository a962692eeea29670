using Microsoft.Extensions.Options;
using Tunnel2.ProxyEntry.Configuration;
using Tunnel2.ProxyEntry.Limits;
using Tunnel2.TunnelServer.Configuration;
using Tunnel2.TunnelServer.Security;
using Tunnel2.TunnelServer.Uplinks.Handshake;

namespace Tunnel2.TunnelServer.Uplinks;

/// <summary>The tunnel port's acceptance layers and the parts they are made of, each a singleton.</summary>
public static class UplinkAcceptanceServices
{
    public static IServiceCollection AddUplinkAcceptance(this IServiceCollection services)
    {
        services.AddSingleton(provider => provider.GetRequiredService<IOptions<TunnelServerOptions>>().Value.ToUplinkSettings());
        services.AddSingleton(provider =>
        {
            TunnelServerOptions options = provider.GetRequiredService<IOptions<TunnelServerOptions>>().Value;
            return new AddressGuard(new FailedAttempts(options.Limits.MaxFailedLoginsPerMinute), options.Limits.MaxUplinksPerAddress);
        });
        services.AddSingleton(provider => new LoginDecision(
            provider.GetRequiredService<ClientAuthenticator>(),
            provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value.RetryAfterSeconds,
            provider.GetRequiredService<IOptions<TunnelServerOptions>>().Value.ClientVisitorPolicies));
        services.AddSingleton(provider => new HandshakeReader(provider.GetRequiredService<IOptions<TunnelServerOptions>>().Value.Limits.HandshakeTimeout));
        services.AddSingleton(provider => new LoginPeer(provider.GetRequiredService<IOptions<ProxyEntryOptions>>().Value.ParseTrustedProxies().Networks));
        services.AddSingleton<LoginAdmission>();
        services.AddSingleton<HandshakeResponder>();
        services.AddSingleton<AcceptanceEvents>();
        services.AddSingleton<TlsLayer>();
        services.AddSingleton<Tunnel2.ProxyEntry.Tcp.TcpMetrics>();
        services.AddSingleton(provider => new Hosting.ServerLoop(provider.GetRequiredService<ILogger<Tcp.TcpSessions>>()));
        services.AddSingleton(provider => new Tcp.TcpSessions(
            provider.GetRequiredService<IOptions<TunnelServerOptions>>(), provider.GetRequiredService<IOptions<ProxyEntryOptions>>(),
            provider.GetRequiredService<Tunnel2.ProxyEntry.Tcp.TcpMetrics>(),
            provider.GetRequiredService<ILogger<Tcp.TcpSessions>>(), provider.GetService<CredentialsFile>(),
            provider.GetRequiredService<Tunnel2.ProxyEntry.Sessions.SessionRegistry>().Policies, provider.GetRequiredService<Hosting.ServerLoop>()));
        services.AddSingleton<HandshakeLayer>();
        services.AddSingleton<TransportSwitch>();
        services.AddSingleton<UplinkRegistration>();
        services.AddSingleton<OnLoop.LoopUplinks>();
        services.AddSingleton<UplinkAcceptor>();
        return services;
    }
}
