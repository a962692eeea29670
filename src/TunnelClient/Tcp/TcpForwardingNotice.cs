using Tunnel2.TunnelClient.Diagnostics;
namespace Tunnel2.TunnelClient.Tcp;

/// <summary>Prints the session's public TCP address once per address ("Forwarding tcp://… -> target", <see cref="ForwardingLine"/>), as the URL is.</summary>
internal sealed class TcpForwardingNotice(ILogger logger)
{
    private string? _last;

    /// <summary>The last TCP address the server named, if any.</summary>
    public string? Address => Volatile.Read(ref _last);

    public void OnConnected(string? address, string? target)
    {
        if (address is null || target is null || Interlocked.Exchange(ref _last, address) == address)
        {
            return;
        }

        TcpClientLog.Forwarding(logger, address, target);
        ForwardingLine.Write($"tcp://{address}", target);
    }
}
