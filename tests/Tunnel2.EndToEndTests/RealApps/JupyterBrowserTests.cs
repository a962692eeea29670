using Microsoft.Playwright;
using Tunnel2.EndToEndTests.Infrastructure;

namespace Tunnel2.EndToEndTests.RealApps;

/// <summary>
/// Jupyter Notebook in headless Chromium through the tunnel, in host mode and in path mode: the notebook page opens, its
/// kernel connects (over the channels WebSocket, with the page's own Origin) and runs a cell. This is where the issue saw
/// "Kernel Dead".
/// </summary>
public sealed class JupyterBrowserTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_notebook_opens_in_Chromium_and_its_kernel_connects_and_runs_a_cell(bool byHost)
    {
        await using JupyterThroughTunnel jupyter = await JupyterThroughTunnel.StartAsync(byHost);
        await File.WriteAllTextAsync(Path.Combine(jupyter.Notebook.Directory, "hello.ipynb"), EmptyNotebook);

        // *.apps.test resolves to the loopback address, as a wildcard DNS record would point it at the server.
        (IPlaywright playwright, IBrowser browser) = await Chromium.LaunchAsync($"--host-resolver-rules=MAP *.{JupyterThroughTunnel.Suffix} 127.0.0.1");
        using (playwright)
        await using (browser)
        {
            IPage page = await browser.NewPageAsync();
            var logIn = new Uri(jupyter.PublicBase, "tree?token=" + JupyterNotebook.Token);
            await page.GotoAsync(logIn.ToString(), new() { WaitUntil = WaitUntilState.DOMContentLoaded });
            await page.GotoAsync(new Uri(jupyter.PublicBase, "notebooks/hello.ipynb").ToString(), new() { WaitUntil = WaitUntilState.DOMContentLoaded });

            try
            {
                await page.WaitForFunctionAsync("() => window.Jupyter?.notebook?.kernel?.is_connected()", null, new() { Timeout = 60_000 });
            }
            catch (TimeoutException ex)
            {
                string state = await page.Locator("#notification_kernel").TextContentAsync() ?? "";
                throw new InvalidOperationException($"The kernel did not connect (notification: '{state}').\n{jupyter.Log}", ex);
            }

            await page.EvaluateAsync("() => { const cell = Jupyter.notebook.get_cell(0); cell.set_text('print(6*7)'); cell.execute(); }");
            await Assertions.Expect(page.Locator(".output_area pre")).ToHaveTextAsync("42", new() { Timeout = 30_000 });
            Assert.NotEqual("Kernel Dead", await page.Locator("#notification_kernel").TextContentAsync());
        }
    }

    private const string EmptyNotebook = """
        {"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": []}],
         "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
         "nbformat": 4, "nbformat_minor": 5}
        """;
}
