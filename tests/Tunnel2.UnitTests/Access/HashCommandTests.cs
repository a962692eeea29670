using Tunnel2.ProxyEntry.Access;
using Tunnel2.TunnelServer.Security;

namespace Tunnel2.UnitTests.Access;

/// <summary><c>TunnelServer hash-token</c> and <c>hash-password</c>: the secret from standard input, the stored form out.</summary>
public sealed class HashCommandTests
{
    [Fact]
    public void Hash_token_prints_the_sha256_form_the_credentials_file_takes()
    {
        var output = new StringWriter();

        int exit = HashCommand.Run(["hash-token"], new StringReader("a-long-random-client-token\n"), output, new StringWriter());

        Assert.Equal(0, exit);
        Assert.True(TokenHash.TryParse(output.ToString().Trim(), out byte[] hash));
        Assert.Equal(TokenHash.Of("a-long-random-client-token"), hash);
    }

    [Fact]
    public void Hash_password_prints_a_bcrypt_hash_that_verifies()
    {
        var output = new StringWriter();

        int exit = HashCommand.Run(["hash-password"], new StringReader("wonderland\n"), output, new StringWriter());

        Assert.Equal(0, exit);
        Assert.True(PasswordHash.TryParse(output.ToString().Trim(), out PasswordHash? hash));
        Assert.True(hash!.Verify("alice", "wonderland"));
    }

    [Theory]
    [InlineData("hash-token", "")]
    [InlineData("hash-token", "short")]
    [InlineData("hash-password", "")]
    public void No_secret_or_a_short_token_exits_2_saying_why(string command, string input)
    {
        var error = new StringWriter();

        Assert.Equal(2, HashCommand.Run([command], new StringReader(input), new StringWriter(), error));
        Assert.Contains(command, error.ToString(), StringComparison.Ordinal);
    }
}
