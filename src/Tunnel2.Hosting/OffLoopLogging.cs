using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Tunnel2.Loops.Guard;

namespace Tunnel2.Hosting;

/// <summary>
/// Code that runs on an event loop and logs there (the server's Kestrel and ProxyEntry with the public listener on its
/// loop; the client's relay with its backend connections on its loop): the host's logger factory (Serilog's) is
/// wrapped so that such lines are written on the thread pool, never on the loop.
/// </summary>
public static class OffLoopLogging
{
    /// <summary>Wraps the last registered <see cref="ILoggerFactory"/>; call after the host's logging is added.</summary>
    /// <exception cref="InvalidOperationException">The factory is registered by type only (not the case with Serilog).</exception>
    public static void Use(IServiceCollection services)
    {
        ServiceDescriptor original = services.LastOrDefault(descriptor => descriptor.ServiceType == typeof(ILoggerFactory))
            ?? throw new InvalidOperationException("No logger factory is registered to wrap.");
        Func<IServiceProvider, ILoggerFactory> create = original switch
        {
            { ImplementationFactory: { } factory } => provider => (ILoggerFactory)factory(provider),
            { ImplementationInstance: ILoggerFactory instance } => _ => new KeptOpen(instance),
            _ => throw new InvalidOperationException($"The logger factory {original.ImplementationType} is registered by type; it cannot be wrapped."),
        };
        services.Remove(original);
        services.AddSingleton<ILoggerFactory>(provider => new OffLoopLoggerFactory(create(provider)));
    }

    /// <summary>A factory the container did not create is not the container's to dispose.</summary>
    private sealed class KeptOpen(ILoggerFactory inner) : ILoggerFactory
    {
        public ILogger CreateLogger(string categoryName) => inner.CreateLogger(categoryName);

        public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

        public void Dispose()
        {
        }
    }
}
