using System.Text.Json;
using Microsoft.AspNetCore.Http.HttpResults;
using Tunnel2.Hosting;
using Tunnel2.ProxyEntry.Balancing;
using Tunnel2.ProxyEntry.Draining;
using Tunnel2.ProxyEntry.Sessions;
using Tunnel2.TunnelServer.Hosting;

using Tunnel2.TunnelServer.Tcp;

namespace Tunnel2.TunnelServer.Admin;

/// <summary>
/// The admin API on the admin listener: the server, its sessions and their clients as JSON, and one client drained
/// (GoAway: it finishes what it has in flight and logs in again on a new uplink) or disconnected (closed at once; it
/// reconnects after its backoff). Described by the OpenAPI document at <c>/openapi/v1.json</c>.
/// </summary>
public static class AdminApi
{
    private static readonly DateTimeOffset StartedAt = DateTimeOffset.UtcNow;

    /// <summary>How long a drained client may take to finish its streams before its uplink is closed.</summary>
    public static readonly TimeSpan ClientDrainTimeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Maps the API on the admin listener's routes (<see cref="AdminRoutes"/>): on any other port these paths are 404,
    /// as if they did not exist.
    /// </summary>
    public static void Map(RouteGroupBuilder admin)
    {
        admin.MapOpenApi("/openapi/{documentName}.json");
        admin.MapGet("/", Dashboard.Page).ExcludeFromDescription();
        admin.MapGet("/api/live", Live).WithTags("admin").WithName("Live")
            .WithSummary("Server-sent events, one a second: every session's rate, 5xx answers and p50/p99 over the last minute");
        RouteGroupBuilder api = admin.MapGroup("/api").WithTags("admin");
        api.MapGet("/server", GetServer).WithName("GetServer").WithSummary("The server: version, listeners, sessions and uplinks");
        api.MapGet("/sessions", GetSessions).WithName("GetSessions").WithSummary("Every session with a client, busiest first");
        api.MapGet("/sessions/{session}", GetSession).WithName("GetSession").WithSummary("One session and its clients");
        api.MapPost("/sessions/{session}/clients/{client:long}/drain", DrainClient).WithName("DrainClient")
            .WithSummary("GoAway to one client: it finishes its requests in flight, then logs in again on a new uplink");
        api.MapDelete("/sessions/{session}/clients/{client:long}", DisconnectClient).WithName("DisconnectClient")
            .WithSummary("Close one client's uplink at once: its requests in flight fail; it reconnects after its backoff");
    }

    /// <summary>The feed ends when the server stops, too: an open dashboard held its shutdown for the whole shutdown timeout (40 s).</summary>
    private static ServerSentEventsResult<string> Live(SessionRegistry registry, LiveTraffic traffic, TcpSessions tcp, IHostApplicationLifetime lifetime,
        HttpContext context) =>
        TypedResults.ServerSentEvents(Snapshots(registry, traffic, tcp, context.RequestAborted, lifetime.ApplicationStopping), eventType: "snapshot");

    private static async IAsyncEnumerable<string> Snapshots(SessionRegistry registry, LiveTraffic traffic, TcpSessions tcp, CancellationToken requestAborted,
        CancellationToken stopping, [System.Runtime.CompilerServices.EnumeratorCancellation] CancellationToken enumeration = default)
    {
        using var ended = CancellationTokenSource.CreateLinkedTokenSource(requestAborted, stopping, enumeration);
        CancellationToken aborted = ended.Token;
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        do
        {
            yield return JsonSerializer.Serialize(LiveSnapshotOf(registry, traffic, tcp), AdminJsonContext.Default.LiveSnapshot);
        }
        while (await WaitAsync(timer, aborted));
    }

    private static async ValueTask<bool> WaitAsync(PeriodicTimer timer, CancellationToken aborted)
    {
        try
        {
            return await timer.WaitForNextTickAsync(aborted);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    internal static LiveSnapshot LiveSnapshotOf(SessionRegistry registry, LiveTraffic traffic, TcpSessions tcp)
    {
        const int Seconds = 60;
        Dictionary<string, long[]> perSecond = traffic.Timeline(Seconds);
        var traffics = new Dictionary<string, LiveTraffic.SessionTraffic>(StringComparer.Ordinal);
        foreach (LiveTraffic.SessionTraffic session in traffic.Snapshot(Seconds))
        {
            traffics[session.Session] = session;
        }

        var sessions = new List<LiveSession>();
        var ids = new HashSet<string>(registry.GetSessionIds(), StringComparer.Ordinal);
        ids.UnionWith(traffics.Keys);
        long now = TimeProvider.System.GetTimestamp();
        foreach (string id in ids)
        {
            IReadOnlyList<SessionMember> members = registry.GetMembers(id);
            int ready = 0;
            foreach (SessionMember member in members)
            {
                ready += member.IsReady(now) ? 1 : 0;
            }

            traffics.TryGetValue(id, out LiveTraffic.SessionTraffic seen);
            sessions.Add(new LiveSession(id, members.Count, ready, Math.Round(seen.RequestsPerSecond, 2), seen.Requests, seen.ServerErrors,
                seen.P50Ms, seen.P99Ms, perSecond.GetValueOrDefault(id) ?? new long[Seconds], tcp.PortOf(id), tcp.OpenConnections(id)));
        }

        sessions.Sort(static (a, b) => b.Requests != a.Requests ? b.Requests.CompareTo(a.Requests) : string.CompareOrdinal(a.Id, b.Id));
        return new LiveSnapshot(DateTimeOffset.UtcNow, registry.GetAllUplinks().Count, sessions);
    }

    private static Ok<ServerInfo> GetServer(SessionRegistry registry, ServerEndpoints listeners, PublicDrain drain)
    {
        string version = ProductVersion.Of(typeof(AdminApi).Assembly);
        return TypedResults.Ok(new ServerInfo("TunnelServer", version, StartedAt, listeners.PublicUrl.ToString(), listeners.TunnelUrl.ToString(),
            registry.SessionCount, registry.GetAllUplinks().Count, drain.IsDraining));
    }

    private static Ok<SessionSummary[]> GetSessions(SessionRegistry registry, TcpSessions tcp)
    {
        var sessions = new List<SessionSummary>();
        foreach (string id in registry.GetSessionIds())
        {
            IReadOnlyList<SessionMember> members = registry.GetMembers(id);
            if (members.Count == 0)
            {
                continue;
            }

            int ready = 0, open = 0;
            long requests = 0, errors = 0;
            long now = TimeProvider.System.GetTimestamp();
            foreach (SessionMember member in members)
            {
                ready += member.IsReady(now) ? 1 : 0;
                open += member.Outstanding;
                requests += member.Requests;
                errors += member.ServerErrors;
            }

            BalancingPolicy policy = registry.PolicyFor(id);
            sessions.Add(new SessionSummary(id, members.Count, ready, open, requests, errors, policy.Strategy.ToString(), policy.Affinity.ToString(),
                tcp.PortOf(id), tcp.OpenConnections(id)));
        }

        sessions.Sort(static (a, b) => b.Requests.CompareTo(a.Requests));
        return TypedResults.Ok(sessions.ToArray());
    }

    private static Results<Ok<SessionDetail>, ProblemHttpResult> GetSession(string session, SessionRegistry registry, TcpSessions tcp)
    {
        IReadOnlyList<SessionMember> members = registry.GetMembers(session);
        if (members.Count == 0)
        {
            return NoSuchSession(session);
        }

        long now = TimeProvider.System.GetTimestamp();
        var clients = new ClientInfo[members.Count];
        for (int i = 0; i < clients.Length; i++)
        {
            SessionMember member = members[i];
            clients[i] = new ClientInfo(member.Id, member.InstanceId, member.Remote, member.Transport, member.Uplink.Settings.ProtocolVersion,
                member.ConnectedAt, member.Weight, member.Outstanding, member.Requests, member.ServerErrors, member.IsReady(now),
                member.Uplink.IsDraining || !member.Uplink.AcceptsNewStreams);
        }

        BalancingPolicy policy = registry.PolicyFor(session);
        return TypedResults.Ok(new SessionDetail(session, policy.Strategy.ToString(), policy.Affinity.ToString(),
            tcp.PortOf(session), tcp.OpenConnections(session), clients));
    }

    private static Results<Accepted<ClientAction>, ProblemHttpResult> DrainClient(string session, long client, SessionRegistry registry)
    {
        if (Find(registry, session, client) is not { } member)
        {
            return NoSuchClient(session, client);
        }

        _ = member.Uplink.DrainAsync(ClientDrainTimeout);
        return TypedResults.Accepted((string?)null, new ClientAction(client, session, "draining"));
    }

    private static Results<Ok<ClientAction>, ProblemHttpResult> DisconnectClient(string session, long client, SessionRegistry registry)
    {
        if (Find(registry, session, client) is not { } member)
        {
            return NoSuchClient(session, client);
        }

        member.Uplink.Close("disconnected through the admin API");
        return TypedResults.Ok(new ClientAction(client, session, "disconnected"));
    }

    private static SessionMember? Find(SessionRegistry registry, string session, long client)
    {
        foreach (SessionMember member in registry.GetMembers(session))
        {
            if (member.Id == client)
            {
                return member;
            }
        }

        return null;
    }

    private static ProblemHttpResult NoSuchSession(string session) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, type: ProblemTypes.NoSuchSession, title: "No such session",
            detail: $"Session '{session}' has no client.");

    private static ProblemHttpResult NoSuchClient(string session, long client) =>
        TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, type: ProblemTypes.NoSuchClient, title: "No such client",
            detail: $"Session '{session}' has no client {client}.");
}
