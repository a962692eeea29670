namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A python-socketio 5.7 server (Debian's <c>python3-socketio</c>, on aiohttp from <c>python3-aiohttp</c>, so that it
/// takes the upgrade to WebSocket), written for one test: clients join rooms, say something to their room, and ask which
/// transport the server has for them. Engine.IO's own check is left on: it refuses an <c>Origin</c> that is not the
/// <c>Host</c> it gets (or <c>X-Forwarded-Host</c>).
/// </summary>
public static class SocketIoServer
{
    private const string Script = """
        import sys
        import socketio
        from aiohttp import web

        sio = socketio.AsyncServer(async_mode='aiohttp')
        app = web.Application()
        sio.attach(app)


        @sio.event
        async def join(sid, room):
            sio.enter_room(sid, room)
            return room


        @sio.event
        async def say(sid, message):
            # Queued to every member of the room before the acknowledgement is queued to the sender.
            await sio.emit('said', message, room=message['room'])
            return 'sent'


        @sio.event
        async def transport(sid):
            # sio.transport(sid) of 5.7 takes the Socket.IO sid for the Engine.IO one; they differ since Socket.IO 5.
            return sio.eio.transport(sio.manager.eio_sid_from_sid(sid, '/'))


        web.run_app(app, host='127.0.0.1', port=int(sys.argv[1]), print=lambda text: print(text, flush=True))
        """;

    public static async Task<PythonApp> StartAsync()
    {
        PythonApp.Require("socketio", "python3-socketio", "The socket.io tests");
        PythonApp.Require("aiohttp", "python3-aiohttp", "The socket.io tests");
        string directory = PythonApp.CreateDirectory("socketio");
        try
        {
            await File.WriteAllTextAsync(Path.Combine(directory, "server.py"), Script);
        }
        catch
        {
            PythonApp.DeleteDirectory(directory);
            throw;
        }

        return await PythonApp.StartAsync(directory, "socket.io/?EIO=4&transport=polling", new Dictionary<string, string>(), "server.py", "{port}");
    }
}
