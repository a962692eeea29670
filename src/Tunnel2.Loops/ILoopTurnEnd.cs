namespace Tunnel2.Loops;

/// <summary>
/// Work deferred to the end of a loop turn, after every ready descriptor and posted item of that turn was handled:
/// where a writer sends what the turn produced in one call (nginx's and kestrel-linux-transport's deferred send).
/// </summary>
public interface ILoopTurnEnd
{
    void OnTurnEnd();
}
