namespace Tunnel2.TunnelClient.Uplinks;

/// <summary>The server answered the upgrade with an HTTP error instead of 101.</summary>
public sealed class UplinkRefusedException : Exception
{
    public UplinkRefusedException(int statusCode, string detail)
        : base($"Server answered {statusCode}: {detail}")
    {
        StatusCode = statusCode;
        Detail = detail;
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

    public string Detail { get; }

    /// <summary>401 or 403: retrying with the same token cannot help.</summary>
    public bool IsAuthenticationFailure => StatusCode is 401 or 403;
}
