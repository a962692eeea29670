using Microsoft.AspNetCore.DataProtection;
using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;
using static Tunnel2.EndToEndTests.Access.CredentialsFileTests;

namespace Tunnel2.EndToEndTests.RealApps;

/// <summary>
/// The recipe "Jupyter behind your company login" (docs/security.md), as written: Jupyter Notebook under
/// <c>/session/{id}/</c> behind a TunnelClient process with <c>--path-prefix keep</c>, a TunnelServer process whose
/// credentials file puts an OpenID Connect login (oidc-provider, started here) in front of the session, and headless
/// Chromium that logs in at the provider, opens a notebook, and runs a cell over the kernel's WebSocket.
/// </summary>
public sealed class JupyterLoginTests
{
    [Fact]
    public async Task A_company_login_opens_the_notebook_and_its_kernel_runs_a_cell()
    {
        string session = "lab-" + Guid.NewGuid().ToString("N")[..8];
        string path = Path.Combine(Path.GetTempPath(), $"tunnel2-jupyter-login-{Guid.NewGuid():N}.json");
        string keys = Path.Combine(Path.GetTempPath(), $"tunnel2-jupyter-login-keys-{Guid.NewGuid():N}");
        Directory.CreateDirectory(keys);
        await using OidcProvider provider = await OidcProvider.StartAsync();
        await using JupyterNotebook notebook = await JupyterNotebook.StartAsync($"/session/{session}/");
        await File.WriteAllTextAsync(Path.Combine(notebook.Directory, "hello.ipynb"), EmptyNotebook);
        IDataProtectionProvider shared = DataProtectionProvider.Create(new DirectoryInfo(keys), k => k.SetApplicationName(Tunnel2.ProxyEntry.Access.OidcRule.KeysApplication));
        string probe = OidcProvider.LoginCookie(shared, session, "probe@example.com", TimeSpan.FromHours(1));
        await File.WriteAllTextAsync(path, CredentialsJson([], [
            $$"""
            { "Sessions": "{{session}}", "Oidc": { "Authority": "{{provider.Issuer}}", "ClientId": "{{OidcProvider.ClientId}}",
              "ClientSecret": "{{OidcProvider.ClientSecret}}", "AllowedEmailDomains": [ "example.com" ], "KeysDirectory": "{{keys}}" } }
            """,
        ]));
        try
        {
            await using ProcessStack stack = await ProcessStack.StartAsync(session, new ProcessStackOptions
            {
                ServerArgs = [$"--TunnelServer:CredentialsFile={path}"],
                ClientArgs = ["--path-prefix", "keep"],
                BackendUrl = notebook.Url,
                ProbePath = "/api",
                ProbeHeaders = new Dictionary<string, string> { ["Cookie"] = probe },
            });
            (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync();
            using (playwright)
            await using (browser)
            {
                IPage page = await browser.NewPageAsync();

                IResponse? tree = await provider.LogInAsync(page, stack.SessionUrl("/tree?token=" + JupyterNotebook.Token).ToString(), "carol@example.com", stack.PublicUrl);
                Assert.Equal(200, tree!.Status);
                await page.GotoAsync(stack.SessionUrl("/notebooks/hello.ipynb").ToString(), new() { WaitUntil = WaitUntilState.DOMContentLoaded });
                try
                {
                    await page.WaitForFunctionAsync("() => window.Jupyter?.notebook?.kernel?.is_connected()", null, new() { Timeout = 60_000 });
                }
                catch (TimeoutException ex)
                {
                    throw new InvalidOperationException($"The kernel did not connect.\nJupyter's log:\n{notebook.Output}", ex);
                }

                await page.EvaluateAsync("() => { const cell = Jupyter.notebook.get_cell(0); cell.set_text('print(6*7)'); cell.execute(); }");
                await Assertions.Expect(page.Locator(".output_area pre")).ToHaveTextAsync("42", new() { Timeout = 30_000 });
            }
        }
        finally
        {
            File.Delete(path);
            Directory.Delete(keys, recursive: true);
        }
    }

    private const string EmptyNotebook = """
        {"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": []}],
         "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
         "nbformat": 4, "nbformat_minor": 5}
        """;
}
