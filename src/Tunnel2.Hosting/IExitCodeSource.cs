namespace Tunnel2.Hosting;

/// <summary>A service that decides the process's exit code once its host has stopped (e.g. 3: the server refused the login).</summary>
public interface IExitCodeSource
{
    int ExitCode { get; }
}
