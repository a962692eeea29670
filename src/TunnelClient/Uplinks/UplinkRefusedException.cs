namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>The server answered the upgrade with an HTTP error instead of 101.</summary>
public sealed class UplinkRefusedException : Exception
{
    /// <param name="body">The answer's body: a problem document (RFC 9457) from a Tunnel2 server, else anything.</param>
    public UplinkRefusedException(int statusCode, string body)
        : this(LoginRefusal.Read(statusCode, body))
    {
    }

    internal UplinkRefusedException(LoginRefusal refusal)
        : base(refusal.Message)
    {
        StatusCode = refusal.Status;
        Detail = refusal.Message;
        IsPermanent = refusal.IsPermanent;
    }

    public UplinkRefusedException()
    {
        Detail = string.Empty;
    }

    public UplinkRefusedException(string message) : base(message)
    {
        Detail = message;
    }

    public UplinkRefusedException(string message, Exception innerException) : base(message, innerException)
    {
        Detail = message;
    }

    public int StatusCode { get; }

    /// <summary>What to tell the user: the refusal framed from its problem type, with what to do.</summary>
    public string Detail { get; }

    /// <summary>Retrying cannot help (a bad token, a session or TCP port the server refuses, another protocol, the wrong port): the client stops.</summary>
    public bool IsPermanent { get; }
}
