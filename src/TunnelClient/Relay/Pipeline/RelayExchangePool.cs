using Microsoft.Extensions.ObjectPool;

namespace Tunnel2.TunnelClient.Relay.Pipeline;

/// <summary>The exchanges of streams in flight, reused: a stream takes one as its relay starts and returns it as it ends.</summary>
internal sealed class RelayExchangePool
{
    private readonly DefaultObjectPool<RelayExchange> _pool = new(new Policy(), Environment.ProcessorCount * 64);

    public RelayExchange Rent() => _pool.Get();

    public void Return(RelayExchange exchange) => _pool.Return(exchange);

    private sealed class Policy : PooledObjectPolicy<RelayExchange>
    {
        public override RelayExchange Create() => new();

        public override bool Return(RelayExchange exchange)
        {
            exchange.Clear();
            return true;
        }
    }
}
