using Microsoft.Playwright;

namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// Headless Chromium from the machine's packages (Debian's <c>chromium</c>; <c>TUNNEL2_CHROMIUM</c> names another
/// executable), driven by Playwright. Nothing is downloaded: without that browser the test fails and says how to get it.
/// </summary>
public static class Chromium
{
    public static string ExecutablePath =>
        Environment.GetEnvironmentVariable("TUNNEL2_CHROMIUM") is { Length: > 0 } configured ? configured : "/usr/bin/chromium";

    /// <param name="extraArgs">More Chromium switches, e.g. <c>--host-resolver-rules=MAP *.apps.test 127.0.0.1</c>.</param>
    public static async Task<(IPlaywright Playwright, IBrowser Browser)> LaunchAsync(params string[] extraArgs)
    {
        if (!File.Exists(ExecutablePath))
        {
            throw new InvalidOperationException($"No Chromium at {ExecutablePath}: apt-get install chromium (or set TUNNEL2_CHROMIUM).");
        }

        IPlaywright playwright = await Playwright.CreateAsync();
        IBrowser browser = await playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
        {
            ExecutablePath = ExecutablePath,
            Headless = true,
            Args = ["--no-sandbox", .. extraArgs], // CI runs as root, where Chromium's sandbox cannot start
        });
        return (playwright, browser);
    }
}
