using System.Globalization;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Tcp;

/// <summary>
/// A real PostgreSQL (a scratch cluster made by the test with initdb) behind a TCP session: psql and pgbench, Debian's
/// own clients, through the session's public TCP port; a query's answer checked against the same query sent directly.
/// </summary>
public sealed class PostgresTcpTests
{
    [Fact]
    public async Task Psql_and_pgbench_through_the_tunnel_get_what_they_get_directly()
    {
        await using ScratchPostgres postgres = await ScratchPostgres.StartAsync();
        await using TunnelStack stack = await TcpTunnel.StartStackAsync();
        string session = $"tcp-pg-{Guid.NewGuid():N}"[..30];
        await stack.StartClientAsync(session, backend: null, token: null, maxConcurrency: 100, "--tcp", $"127.0.0.1:{postgres.Port}");
        string direct = postgres.Port.ToString(CultureInfo.InvariantCulture);
        string tunnel = TcpTunnel.PortOf(stack, session)!.Value.ToString(CultureInfo.InvariantCulture);
        const string Query = "select count(*), md5(string_agg(g::text || repeat('x', 100), ',' order by g)) from generate_series(1, 50000) g";

        string throughTunnel = await ScratchPostgres.RunAsync("psql", "-h", "127.0.0.1", "-p", tunnel, "-U", "postgres", "-At", "-c", Query);
        string directly = await ScratchPostgres.RunAsync("psql", "-h", "127.0.0.1", "-p", direct, "-U", "postgres", "-At", "-c", Query);
        Assert.StartsWith("50000|", throughTunnel, StringComparison.Ordinal);
        Assert.Equal(directly, throughTunnel);

        await ScratchPostgres.RunAsync("pgbench", "-h", "127.0.0.1", "-p", tunnel, "-U", "postgres", "-i", "-s", "1", "postgres");
        string bench = await ScratchPostgres.RunAsync("pgbench", "-h", "127.0.0.1", "-p", tunnel, "-U", "postgres", "-S", "-c", "4", "-j", "2", "-t", "250", "postgres");
        Assert.Contains("number of transactions actually processed: 1000/1000", bench, StringComparison.Ordinal);
        Assert.Contains("number of failed transactions: 0", bench, StringComparison.Ordinal);
    }
}
