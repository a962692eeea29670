using Tunnel2.Protocol.Multiplexing;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>TunnelClient processes serving a session of an in-process <see cref="TunnelStack"/>.</summary>
public static class ProcessClients
{
    public static TunnelProcess Start(TunnelStack stack, string session, string name, params string[] extraArgs) => TunnelProcess.StartClient(name,
    [
        "--server", stack.TunnelUrl.ToString().TrimEnd('/'),
        "--session", session,
        "--token", TunnelStack.Token,
        "--backend", stack.BackendUrl.ToString().TrimEnd('/'),
        "--max-concurrency", "100",
        "--drain-timeout", "00:00:10",
        "--TunnelClient:Uplink:ReconnectMinDelay=00:00:00.050",
        "--TunnelClient:Uplink:ReconnectMaxDelay=00:00:00.500",
        .. extraArgs,
    ]);

    /// <summary>Waits until the session has an uplink that is not in <paramref name="known"/> and returns it.</summary>
    public static async Task<Uplink> WaitForNewUplinkAsync(TunnelStack stack, string session, IReadOnlyCollection<Uplink> known, TunnelProcess process)
    {
        Uplink? found = null;
        await Eventually.WaitUntilAsync(() =>
        {
            foreach (Uplink uplink in stack.Registry.GetUplinks(session))
            {
                if (!known.Contains(uplink))
                {
                    found = uplink;
                    return true;
                }
            }

            Assert.False(process.HasExited, $"{process.Name} exited early:\n{process.Output}");
            return false;
        }, $"{process.Name} is registered for session {session}", TimeSpan.FromSeconds(30));
        return found!;
    }
}
