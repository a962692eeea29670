namespace Tunnel2.EndToEndTests.Infrastructure;

/// <summary>
/// A Django 3.2 site from Debian's <c>python3-django</c>, made for one test as a user makes one: <c>startproject</c>
/// with its default settings (DEBUG on, so <c>runserver</c> serves the static files), the names it is reached by in
/// <c>ALLOWED_HOSTS</c>, <c>migrate</c> on SQLite, a superuser from <c>createsuperuser --noinput</c>, served by
/// <c>runserver --noreload</c>. Under a base path its URLs and <c>STATIC_URL</c> start with that path, and the tunnel's
/// client keeps the prefix (<c>--path-prefix keep</c>): <c>FORCE_SCRIPT_NAME</c> with the prefix stripped serves the
/// pages too, but runserver's static files handler compares the stripped path with a <c>STATIC_URL</c> that has the
/// script name in front, and answers 404 for every static file (Django 3.2).
/// </summary>
public static class DjangoSite
{
    public const string User = "admin";
    public const string Password = "e2e-Admin-pass-0123";

    /// <param name="allowedHost">The one host name it serves (its readiness probe takes any answer, a 400 for loopback too).</param>
    /// <param name="basePath">Its base path, e.g. <c>/session/dj/</c>, or <c>/</c>.</param>
    public static async Task<PythonApp> StartAsync(string allowedHost, string basePath)
    {
        PythonApp.Require("django", "python3-django", "The Django admin tests");
        string directory = PythonApp.CreateDirectory("django");
        var environment = new Dictionary<string, string> { ["DJANGO_SUPERUSER_PASSWORD"] = Password };
        try
        {
            await PythonApp.RunAsync(directory, environment, "-m", "django", "startproject", "e2esite", ".");
            await File.AppendAllTextAsync(Path.Combine(directory, "e2esite", "settings.py"), Settings(allowedHost, basePath));
            await File.WriteAllTextAsync(Path.Combine(directory, "e2esite", "urls.py"), Urls(basePath));
            await PythonApp.RunAsync(directory, environment, "manage.py", "migrate", "--verbosity", "0");
            await PythonApp.RunAsync(directory, environment, "manage.py", "createsuperuser", "--noinput", "--username", User, "--email", "admin@e2e.test");
        }
        catch
        {
            PythonApp.DeleteDirectory(directory);
            throw;
        }

        return await PythonApp.StartAsync(directory, basePath.TrimStart('/') + "admin/login/", environment, "manage.py", "runserver", "127.0.0.1:{port}", "--noreload");
    }

    private static string Settings(string allowedHost, string basePath) => $"""

        # The end-to-end test's site, reached through the tunnel by its public name.
        ALLOWED_HOSTS = ['{allowedHost}']
        STATIC_URL = '{basePath}static/'

        """;

    private static string Urls(string basePath) => $"""
        from django.contrib import admin
        from django.urls import path

        urlpatterns = [
            path('{basePath.TrimStart('/')}admin/', admin.site.urls),
        ]

        """;
}
