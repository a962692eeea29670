using System.Reflection;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Http;
using Tunnel2.ProxyEntry.Pipeline;
using Tunnel2.TunnelClient.Relay.Pipeline;

namespace Tunnel2.UnitTests.Architecture;

/// <summary>
/// A pooled per-request context must come back from <c>Clear()</c> as a new one: a field that <c>Clear()</c> forgets
/// keeps the last request alive and leaks into the next. Every instance field is set (a field added later too), then
/// cleared and compared with a new object's.
/// </summary>
public sealed class PooledContextClearTests
{
    private const BindingFlags InstanceFields = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

    [Theory]
    [InlineData(typeof(ProxyExchange))]
    [InlineData(typeof(RelayExchange))]
    public void Clear_brings_every_field_back_to_a_new_objects(Type context)
    {
        object fresh = Activator.CreateInstance(context, nonPublic: true)!;
        object used = Activator.CreateInstance(context, nonPublic: true)!;
        FieldInfo[] fields = context.GetFields(InstanceFields);
        Assert.NotEmpty(fields);

        foreach (FieldInfo field in fields)
        {
            field.SetValue(used, NonDefault(field.FieldType));
            Assert.False(Equals(field.GetValue(fresh), field.GetValue(used)), $"{context.Name}.{field.Name} could not be given a value of its own.");
        }

        context.GetMethod("Clear")!.Invoke(used, null);

        string[] kept = fields.Where(field => !Equals(field.GetValue(fresh), field.GetValue(used))).Select(field => field.Name).ToArray();
        Assert.True(kept.Length == 0, $"{context.Name}.Clear() keeps: {string.Join(", ", kept)}");
    }

    [Fact]
    public void A_field_that_clear_forgets_is_caught()
    {
        var forgetful = new Forgetful();
        foreach (FieldInfo field in typeof(Forgetful).GetFields(InstanceFields))
        {
            field.SetValue(forgetful, NonDefault(field.FieldType));
        }

        forgetful.Clear();

        Assert.NotEqual(new Forgetful().Kept, forgetful.Kept);
    }

    /// <summary>A value unlike any a new object holds: a new instance, a non-zero number, a non-empty struct.</summary>
    private static object NonDefault(Type type, int depth = 0)
    {
        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return NonDefault(underlying, depth);
        }

        return type switch
        {
            _ when type == typeof(string) => "set",
            _ when type == typeof(bool) => true,
            _ when type.IsEnum => Enum.ToObject(type, 1),
            _ when type.IsPrimitive => Convert.ChangeType(7, type, System.Globalization.CultureInfo.InvariantCulture),
            _ when type == typeof(Task) => Task.FromResult(7),
            _ when type == typeof(HttpContext) => new DefaultHttpContext(),
            _ when type.IsValueType => NonDefaultStruct(type, depth),
            _ => RuntimeHelpers.GetUninitializedObject(Concrete(type)),
        };
    }

    private static object NonDefaultStruct(Type type, int depth)
    {
        object value = Activator.CreateInstance(type)!;
        FieldInfo first = type.GetFields(InstanceFields).First();
        Assert.True(depth < 4, $"{type.Name} nests too deep to fill.");
        first.SetValue(value, NonDefault(first.FieldType, depth + 1));
        return value;
    }

    /// <summary>The type itself, or for an interface or abstract class one of its implementations in its own assembly or the contexts'.</summary>
    private static Type Concrete(Type type) => !type.IsAbstract && !type.IsInterface
        ? type
        : type.Assembly.GetTypes().Concat(typeof(RelayExchange).Assembly.GetTypes())
            .First(candidate => candidate is { IsAbstract: false, IsInterface: false, IsGenericTypeDefinition: false } && type.IsAssignableFrom(candidate));

    private sealed class Forgetful
    {
        public string? Cleared { get; set; }
        public string? Kept { get; set; }

        public void Clear() => Cleared = null;
    }
}
