using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.Uplinks;

/// <summary>
/// Issue 52 item 5, against the built TunnelServer: 1,000 connections to its plain tunnel port that send nothing wait
/// for their login head on the server's event loop (LoopLoginTests has the same in-process), so the process, measured
/// on its own, gains no thread per connection and little memory; each is answered 408 and closed at the login timeout,
/// and a real client logs in and serves a request while they wait.
/// </summary>
public sealed partial class SilentLoginsProcessTests
{
    private const int Logins = 1000;

    /// <summary>Long enough for a client process to start and log in while the 1,000 wait, short enough for the suite.</summary>
    private static readonly TimeSpan LoginTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Threads beyond the idle server's that the crowd may add (measured: 17 idle, 17 with the 1,000 waiting, 18 after a client's login).</summary>
    private const int MoreThreads = 16;

    /// <summary>Resident memory per waiting login: measured 7.4 KiB (a socket, its handshake's state and timer, the late client's login included); four times that.</summary>
    private const long BytesPerLogin = 32 * 1024;

    /// <summary>Descriptors the server opens and closes of its own while the crowd connects (a pooled connection, a timer's).</summary>
    private const int OwnDescriptors = 8;

    [Fact]
    public async Task A_thousand_silent_logins_cost_the_server_process_no_thread_each_and_are_answered_408_at_the_login_timeout()
    {
        await using ProcessStack stack = await ProcessStack.StartAsync("silent-first", $"--TunnelServer:Limits:HandshakeTimeout={LoginTimeout:c}");
        ProcessStatus idle = ProcessStatus.Of(stack.Server.Id);
        var logins = new SilentLogin[Logins];
        try
        {
            for (int i = 0; i < Logins; i++)
            {
                logins[i] = await SilentLogin.ConnectAsync(stack.TunnelUrl.Port);
            }

            // Every one accepted: a descriptor each in the server (less a few of its own that come and go, measured 1).
            ProcessStatus waiting = idle;
            if (!await Eventually.TryWaitAsync(() => (waiting = ProcessStatus.Of(stack.Server.Id)).OpenFiles >= idle.OpenFiles + Logins - OwnDescriptors, LoginTimeout))
            {
                Assert.Fail($"the server holds {waiting.OpenFiles - idle.OpenFiles} more descriptors, not {Logins} ({idle} before, {waiting} now)");
            }

            await ServeALateClientAsync(stack);
            int answeredEarly = logins.Count(login => login.Answer.IsCompleted);
            ProcessStatus served = ProcessStatus.Of(stack.Server.Id);

            string[] answers = await Task.WhenAll(logins.Select(login => login.Answer)).WaitAsync(LoginTimeout + TimeSpan.FromSeconds(30));
            TimeSpan soonest = logins.Min(login => login.Waited);
            long perLogin = (Math.Max(waiting.ResidentBytes, served.ResidentBytes) - idle.ResidentBytes) / Logins;
            TestContext.Current.TestOutputHelper?.WriteLine(
                $"idle {idle}; 1,000 waiting {waiting}; a client served beside them {served}; {perLogin / 1024.0:F1} KiB per login; " +
                $"answered before the client was served: {answeredEarly}; soonest answer after {soonest.TotalSeconds:F2} s");

            Assert.True(Math.Max(waiting.Threads, served.Threads) <= idle.Threads + MoreThreads,
                $"the server went from {idle.Threads} threads to {waiting.Threads} with {Logins} silent logins, {served.Threads} after a client's login");
            Assert.True(perLogin <= BytesPerLogin, $"the server grew by {perLogin / 1024} KiB per silent login");
            Assert.Equal(0, answeredEarly); // the client was served while all 1,000 still waited
            Assert.All(answers, answer => Assert.StartsWith("HTTP/1.1 408 Request Timeout\r\n", answer, StringComparison.Ordinal));
            Assert.True(soonest >= LoginTimeout - TimeSpan.FromMilliseconds(200), $"a silent login was answered after {soonest.TotalSeconds:F2} s, before the timeout");
            // The existing policy: a warning per refused login, naming the refusal (no summary line). The last lines may
            // still be in the server's stdout pipe when the last 408 arrives.
            await Eventually.TryWaitAsync(() => RefusedLine().Count(stack.Server.Output) >= Logins, Eventually.DefaultTimeout);
            Assert.Equal(Logins, RefusedLine().Count(stack.Server.Output));
            Assert.False(stack.Server.HasExited, "the server exited");
        }
        finally
        {
            foreach (SilentLogin? login in logins)
            {
                login?.Dispose();
            }
        }
    }

    /// <summary>A second client process, started while the 1,000 wait, logs in and serves a request.</summary>
    private static async Task ServeALateClientAsync(ProcessStack stack)
    {
        await using TunnelProcess late = TunnelProcess.StartClient("late-client", ["--server", stack.TunnelUrl.ToString().TrimEnd('/'),
            "--session", "silent-late", "--token", TunnelStack.Token, "--backend", stack.BackendUrl.ToString().TrimEnd('/')]);
        using HttpClient http = CallerHttp.Create();
        await Eventually.WaitUntilAsync(async () =>
        {
            using HttpResponseMessage pong = await http.GetAsync(new Uri(stack.PublicUrl, "/session/silent-late/loadtest/ping"));
            return pong.StatusCode == HttpStatusCode.OK;
        }, "a client that logs in beside 1,000 silent logins serves its session");
    }

    [GeneratedRegex(@"Uplink refused from 127\.0\.0\.1: 408 handshake-timeout")]
    private static partial Regex RefusedLine();

    /// <summary>A connection to the tunnel port that sends nothing and reads what it is told until the server closes it.</summary>
    private sealed class SilentLogin : IDisposable
    {
        private readonly Socket _socket;
        private readonly long _connected = Stopwatch.GetTimestamp();
        private long _answered;

        private SilentLogin(Socket socket)
        {
            _socket = socket;
            Answer = ReadToEndAsync();
        }

        /// <summary>Everything the server wrote before it closed the connection.</summary>
        public Task<string> Answer { get; }

        /// <summary>From the connect to the server's close.</summary>
        public TimeSpan Waited => Stopwatch.GetElapsedTime(_connected, Interlocked.Read(ref _answered));

        public static async Task<SilentLogin> ConnectAsync(int port)
        {
            var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync(IPAddress.Loopback, port);
            return new SilentLogin(socket);
        }

        public void Dispose() => _socket.Dispose();

        private async Task<string> ReadToEndAsync()
        {
            var text = new StringBuilder();
            byte[] buffer = new byte[1024];
            int read;
            while ((read = await _socket.ReceiveAsync(buffer, SocketFlags.None)) > 0)
            {
                text.Append(Encoding.ASCII.GetString(buffer, 0, read));
            }

            Interlocked.Exchange(ref _answered, Stopwatch.GetTimestamp());
            return text.ToString();
        }
    }
}
