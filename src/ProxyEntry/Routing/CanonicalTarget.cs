namespace Tunnel2.ProxyEntry.Routing;

/// <summary>What <see cref="CanonicalTarget.TryCreate"/> made of a raw request target.</summary>
public enum CanonicalTargetStatus
{
    Ok,

    /// <summary>Not origin-form (<c>/path?query</c>): absolute-form, authority-form, <c>*</c> or empty.</summary>
    NotOriginForm,

    /// <summary>A <c>..</c> segment climbs above the segments the caller asked to keep fixed.</summary>
    ClimbsAboveRoot,
}

/// <summary>
/// The one canonical form of a request target that routing decides on, whether the route comes from the path
/// (<c>/session/{id}/…</c>) or, later, from the host: the fragment cut off, and the dot-segments of the path resolved
/// as RFC 3986 §5.2.4 says, where a segment counts as a dot-segment also when its dots are percent-encoded
/// (<c>%2e</c>, <c>.%2E</c>, …), since many backends decode before they resolve. Everything else stays as the caller
/// sent it: other percent-encodings (<c>%2F</c> inside a segment is not a separator), empty segments, the query.
/// </summary>
public static class CanonicalTarget
{
    /// <param name="rawTarget">The request target as it came on the request line.</param>
    /// <param name="fixedSegments">
    /// How many leading segments no <c>..</c> may remove (2 for <c>/session/{id}</c>); a target whose dot-segments would
    /// remove one of them is refused rather than resolved into another route.
    /// </param>
    /// <param name="target">The canonical target: the path with its dot-segments resolved, then the query if any.</param>
    public static CanonicalTargetStatus TryCreate(string rawTarget, int fixedSegments, out string target)
    {
        target = string.Empty;
        int fragment = rawTarget.IndexOf('#', StringComparison.Ordinal);
        ReadOnlySpan<char> withoutFragment = fragment < 0 ? rawTarget : rawTarget.AsSpan(0, fragment);
        if (withoutFragment.IsEmpty || withoutFragment[0] != '/')
        {
            return CanonicalTargetStatus.NotOriginForm;
        }

        int queryStart = withoutFragment.IndexOf('?');
        ReadOnlySpan<char> path = queryStart < 0 ? withoutFragment : withoutFragment[..queryStart];
        ReadOnlySpan<char> query = queryStart < 0 ? default : withoutFragment[queryStart..];
        if (path.IndexOfAny('.', '%') < 0 || !HasDotSegment(path))
        {
            // The common case: nothing to resolve, so no copy unless a fragment was cut off.
            target = fragment < 0 ? rawTarget : withoutFragment.ToString();
            return CanonicalTargetStatus.Ok;
        }

        return TryResolve(path, query, fixedSegments, out target);
    }

    private static CanonicalTargetStatus TryResolve(ReadOnlySpan<char> path, ReadOnlySpan<char> query, int fixedSegments, out string target)
    {
        target = string.Empty;

        // The output keeps the start index of each segment in the buffer, so ".." pops in O(1).
        char[] output = new char[path.Length + query.Length];
        int length = 0;
        var starts = new Stack<int>();
        ReadOnlySpan<char> rest = path[1..]; // every segment is preceded by its '/'
        bool endsInDirectory;
        while (true)
        {
            int slash = rest.IndexOf('/');
            ReadOnlySpan<char> segment = slash < 0 ? rest : rest[..slash];
            bool last = slash < 0;
            switch (DotKind(segment))
            {
                case 1:
                    endsInDirectory = last;
                    break;
                case 2:
                    if (starts.Count <= fixedSegments)
                    {
                        return CanonicalTargetStatus.ClimbsAboveRoot;
                    }

                    length = starts.Pop();
                    endsInDirectory = last;
                    break;
                default:
                    starts.Push(length);
                    output[length++] = '/';
                    segment.CopyTo(output.AsSpan(length));
                    length += segment.Length;
                    endsInDirectory = false;
                    break;
            }

            if (last)
            {
                break;
            }

            rest = rest[(slash + 1)..];
        }

        // "/a/b/.." is the directory "/a/", not the resource "/a" (RFC 3986 §5.2.4, step 2C keeps the slash).
        if (endsInDirectory || length == 0)
        {
            output[length++] = '/';
        }

        query.CopyTo(output.AsSpan(length));
        target = new string(output, 0, length + query.Length);
        return CanonicalTargetStatus.Ok;
    }

    private static bool HasDotSegment(ReadOnlySpan<char> path)
    {
        ReadOnlySpan<char> rest = path[1..];
        while (true)
        {
            int slash = rest.IndexOf('/');
            if (DotKind(slash < 0 ? rest : rest[..slash]) != 0)
            {
                return true;
            }

            if (slash < 0)
            {
                return false;
            }

            rest = rest[(slash + 1)..];
        }
    }

    /// <summary>1 for <c>.</c>, 2 for <c>..</c> (either dot may be written <c>%2e</c> or <c>%2E</c>), else 0.</summary>
    private static int DotKind(ReadOnlySpan<char> segment)
    {
        int dots = 0;
        int i = 0;
        while (i < segment.Length)
        {
            if (segment[i] == '.')
            {
                i++;
            }
            else if (segment.Length - i >= 3 && segment[i] == '%' && segment[i + 1] == '2' && (segment[i + 2] | 0x20) == 'e')
            {
                i += 3;
            }
            else
            {
                return 0;
            }

            if (++dots > 2)
            {
                return 0;
            }
        }

        return dots;
    }
}
