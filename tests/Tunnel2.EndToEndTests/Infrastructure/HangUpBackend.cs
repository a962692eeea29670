using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A backend that dies mid-exchange (a raw socket on 127.0.0.1, port 0): it accepts each connection, reads a request
/// head, counts it, and resets the connection without answering, as a process killed while it served the request would.
/// </summary>
public sealed class HangUpBackend : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _accepting;
    private int _requests;

    public HangUpBackend()
    {
        _listener.Start();
        Url = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}");
        _accepting = AcceptAsync();
    }

    public Uri Url { get; }

    /// <summary>Request heads read (and left unanswered).</summary>
    public int Requests => Volatile.Read(ref _requests);

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                Socket socket = await _listener.AcceptSocketAsync(_stop.Token);
                _ = HangUpAsync(socket);
            }
        }
        catch (Exception) when (_stop.IsCancellationRequested)
        {
        }
    }

    private async Task HangUpAsync(Socket socket)
    {
        using (socket)
        {
            var received = new StringBuilder();
            var buffer = new byte[4096];
            try
            {
                while (!received.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
                {
                    int read = await socket.ReceiveAsync(buffer, _stop.Token);
                    if (read == 0)
                    {
                        return;
                    }

                    received.Append(Encoding.ASCII.GetString(buffer, 0, read));
                }

                Interlocked.Increment(ref _requests);
                socket.LingerState = new LingerOption(true, 0); // close with RST: the peer reads "connection reset"
            }
            catch (Exception) when (_stop.IsCancellationRequested)
            {
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await _accepting;
        _stop.Dispose();
    }
}
