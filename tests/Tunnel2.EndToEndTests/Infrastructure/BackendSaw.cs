using System.Net;
using System.Text.Json;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// The headers TestBackend says it received, read from its request description (<c>/loadtest/get</c> and the like):
/// by name, case-insensitive, repeated ones joined with ", ".
/// </summary>
public static class BackendSaw
{
    /// <summary>The headers of a description that came back as a 200; any other status fails the test.</summary>
    public static async Task<Dictionary<string, string>> HeadersAsync(HttpResponseMessage answer)
    {
        Assert.Equal(HttpStatusCode.OK, answer.StatusCode);
        return Headers(await answer.Content.ReadAsStringAsync());
    }

    /// <summary>The headers of a description as text, such as the body of a page a browser shows.</summary>
    public static Dictionary<string, string> Headers(string description)
    {
        using JsonDocument described = JsonDocument.Parse(description);
        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (JsonProperty header in described.RootElement.GetProperty("headers").EnumerateObject())
        {
            headers[header.Name] = header.Value.GetString()!;
        }

        return headers;
    }
}
