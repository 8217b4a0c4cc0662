// The sort order of keys of slot A: ascending with NaN the largest value, or
// its reverse when p_words[6] (descending) is set.
bool key_less(A_C x, A_C y) {
#if defined(A_FLOAT)
  if (isnan(x)) return false;
  if (isnan(y)) return true;
#endif
  return x < y;
}
bool key_before(A_C x, A_C y) { return p_words[6] != 0u ? key_less(y, x) : key_less(x, y); }
