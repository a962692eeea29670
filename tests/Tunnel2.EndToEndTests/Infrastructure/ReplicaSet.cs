namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>Replicas of one app behind one session: a <see cref="ReplicaBackend"/> and a TunnelClient for each, logged in in order.</summary>
public sealed class ReplicaSet : IAsyncDisposable
{
    private readonly List<ReplicaBackend> _replicas = [];

    private ReplicaSet()
    {
    }

    public ReplicaBackend this[int index] => _replicas[index];

    public IReadOnlyList<ReplicaBackend> All => _replicas;

    /// <summary>Starts one replica per name and a client for each on <paramref name="session"/>, with <paramref name="clientArgs"/>.</summary>
    public static async Task<ReplicaSet> StartAsync(TunnelStack stack, string session, string[] names, params string[] clientArgs)
    {
        var set = new ReplicaSet();
        try
        {
            foreach (string name in names)
            {
                ReplicaBackend replica = await ReplicaBackend.StartAsync(name);
                set._replicas.Add(replica);
                await stack.StartClientAsync(session, replica.Url, extraArgs: clientArgs);
            }

            return set;
        }
        catch
        {
            await set.DisposeAsync();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        foreach (ReplicaBackend replica in _replicas)
        {
            await replica.DisposeAsync();
        }
    }
}
