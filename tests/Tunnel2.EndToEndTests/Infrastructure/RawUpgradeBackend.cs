using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A backend on a bare socket, for what Kestrel cannot be made to do on cue: it answers any request with a 101 head
/// and <see cref="Early"/> in the same send (bytes the client's head read takes in with the head), then echoes each read
/// upper-cased; "reset" makes it cut the connection with a reset, and a '.' makes it say "BYE" and end its side (a
/// half-close) while it reads on. When the caller's end comes first, it still says <see cref="LastWords"/>, then ends.
/// </summary>
public sealed class RawUpgradeBackend : IAsyncDisposable
{
    public const string Early = "EARLY;";

    /// <summary>What it sends after the caller's end (a half-close) when it has not ended its own side yet.</summary>
    public const string LastWords = "LAST WORDS";

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _accepting;
    private int _ended;

    private RawUpgradeBackend()
    {
        _listener.Start();
        _accepting = AcceptAsync();
    }

    public Uri Url => new($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}");

    /// <summary>Upgraded connections that ended here (the caller's end came, or either side cut it).</summary>
    public int Ended => Volatile.Read(ref _ended);

    public static RawUpgradeBackend Start() => new();

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await _accepting.ContinueWith(static _ => { }, TaskScheduler.Default);
        _stop.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket = await _listener.AcceptSocketAsync(_stop.Token);
            _ = Task.Run(() => ServeAsync(socket));
        }
    }

    private async Task ServeAsync(Socket socket)
    {
        using (socket)
        {
            bool upgrade = false;
            try
            {
                await ReadHeadAsync(socket);
                upgrade = true;
                await socket.SendAsync(Encoding.ASCII.GetBytes(
                    $"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: raw\r\n\r\n{Early}"), _stop.Token);
                await EchoAsync(socket);
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException or IOException)
            {
                // cut by the other side: counted below
            }
            finally
            {
                if (upgrade)
                {
                    Interlocked.Increment(ref _ended); // not a connection that ended before its head: one comes as each client starts
                }
            }
        }
    }

    private async Task EchoAsync(Socket socket)
    {
        byte[] buffer = new byte[4096];
        bool ended = false;
        int read;
        while ((read = await socket.ReceiveAsync(buffer, _stop.Token)) > 0)
        {
            string text = Encoding.ASCII.GetString(buffer, 0, read);
            if (text.Contains("reset", StringComparison.Ordinal))
            {
                socket.LingerState = new LingerOption(true, 0);
                return; // disposed with linger 0: a reset
            }

            await socket.SendAsync(Encoding.ASCII.GetBytes(text.ToUpperInvariant()), _stop.Token);
            if (text.Contains('.', StringComparison.Ordinal))
            {
                await socket.SendAsync("BYE"u8.ToArray(), _stop.Token);
                socket.Shutdown(SocketShutdown.Send); // this side ends (a half-close); reads on until the caller's end
                ended = true;
            }
        }

        if (!ended)
        {
            await socket.SendAsync(Encoding.ASCII.GetBytes(LastWords), _stop.Token); // answers after the caller's half-close
            socket.Shutdown(SocketShutdown.Send);
        }
    }

    private async Task ReadHeadAsync(Socket socket)
    {
        var head = new StringBuilder();
        byte[] one = new byte[1];
        while (!head.ToString().EndsWith("\r\n\r\n", StringComparison.Ordinal))
        {
            if (await socket.ReceiveAsync(one, _stop.Token) != 1)
            {
                throw new IOException("the connection ended inside the request head");
            }

            head.Append((char)one[0]);
        }
    }
}
