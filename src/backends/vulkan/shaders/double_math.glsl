// f64 transcendentals in software: Vulkan offers only +, -, *, /, fma, sqrt,
// floor and friends on doubles. Each function reduces its argument to a
// small range (exp: by multiples of ln 2; sin/cos: by multiples of pi/2,
// Cody-Waite with pi/2 in three 33-bit parts, accurate while |x| < 2^19 pi/2)
// and evaluates a truncated Taylor series there, summed in Horner form, with
// the C library's results at the edges (NaN, infinities, signed zeros,
// overflow). Literals carry LF: an unsuffixed literal is a float. Locals
// are `precise`: drivers may otherwise reassociate or fuse floating-point
// steps, which undoes the compensations ((1 + x) - 1 is not x).
#define D_NAN (0.0LF / 0.0LF)
#define D_INF (1.0LF / 0.0LF)
#define D_LN2_HI 6.93147180369123816490e-01LF  // ln 2 in 32 bits (k * hi is exact)
#define D_LN2_LO 1.90821492927058770002e-10LF
#define D_LN2 0.69314718055994530942LF
#define D_PI 3.14159265358979323846LF
#define D_PI_2 1.57079632679489661923LF
#define D_PI_4 0.78539816339744830962LF
// pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ far below double precision), 33 bits each.
#define D_PIO2_1 1.57079632673412561417e+00LF
#define D_PIO2_2 6.07710050630396597660e-11LF
#define D_PIO2_3 2.02226624871116645580e-21LF

bool d_signbit(double x) { return (unpackDouble2x32(x).y & 0x80000000u) != 0u; }
double d_copysign(double m, double s) { return d_signbit(s) ? -abs(m) : abs(m); }

// Round half to even from floor alone: llvmpipe's roundEven(double) on CPUs
// without AVX-512 rounds halves toward zero (1.5 -> 1). x - floor(x) is
// exact, and 0 for |x| >= 2^52, where every double is an integer.
double d_round_even(double x) {
  if (isnan(x) || isinf(x)) return x;
  precise const double f = floor(x);
  precise const double frac = x - f;
  precise double r = f;
  if (frac > 0.5LF || (frac == 0.5LF && mod(f, 2.0LF) != 0.0LF)) r = f + 1.0LF;
  return r == 0.0LF ? d_copysign(0.0LF, x) : r;  // -0.5 -> -0, as C's nearbyint
}

// 2^k * p without overflowing the exponent in between (k may reach -1074).
double d_scale(double p, int k) { return ldexp(ldexp(p, k / 2), k - k / 2); }

double d_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893383973096LF) return D_INF;
  if (x < -745.133219101941108420LF) return 0.0LF;
  precise const double k = d_round_even(x * 1.44269504088896340736LF);
  precise const double r = (x - k * D_LN2_HI) - k * D_LN2_LO;  // |r| <= ln2 / 2
  // e^r: Taylor to r^13 (the remainder is below 2^-53 for |r| <= 0.35).
  precise double p = 1.0LF / 6227020800.0LF;
  p = fma(p, r, 1.0LF / 479001600.0LF);
  p = fma(p, r, 1.0LF / 39916800.0LF);
  p = fma(p, r, 1.0LF / 3628800.0LF);
  p = fma(p, r, 1.0LF / 362880.0LF);
  p = fma(p, r, 1.0LF / 40320.0LF);
  p = fma(p, r, 1.0LF / 5040.0LF);
  p = fma(p, r, 1.0LF / 720.0LF);
  p = fma(p, r, 1.0LF / 120.0LF);
  p = fma(p, r, 1.0LF / 24.0LF);
  p = fma(p, r, 1.0LF / 6.0LF);
  p = fma(p, r, 0.5LF);
  p = fma(p, r, 1.0LF);
  p = fma(p, r, 1.0LF);
  return d_scale(p, int(k));
}

// e^x - 1 without cancellation near 0.
double d_expm1(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  if (abs(x) > 0.34LF) {
    if (x < -40.0LF) return -1.0LF;
    return d_exp(x) - 1.0LF;
  }
  // x + x^2/2! + ... + x^16/16!
  precise double p = 1.0LF / 20922789888000.0LF;
  precise double f = 20922789888000.0LF;
  for (int n = 15; n >= 1; --n) {
    f /= double(n + 1);
    p = fma(p, x, 1.0LF / f);
  }
  return p * x;
}

double d_log(double x) {
  if (isnan(x) || x < 0.0LF) return D_NAN;
  if (x == 0.0LF) return -D_INF;
  if (isinf(x)) return x;
  // A subnormal x is m * 2^-1074 with an integer m (its mantissa bits), read
  // exactly from the bits: shaders may flush subnormal operands to zero.
  double scaled = 0.0LF;
  const uvec2 bits = unpackDouble2x32(x);
  if ((bits.y & 0x7ff00000u) == 0u) {
    x = double(bits.y & 0x000fffffu) * 4294967296.0LF + double(bits.x);
    scaled = 1074.0LF;
  }
  int e;
  precise double m = frexp(x, e);  // [0.5, 1)
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the series to s^23.
  precise const double f = m - 1.0LF;  // exact
  precise const double s = f / (2.0LF + f);
  precise const double z = s * s;
  precise double p = 1.0LF / 23.0LF;
  for (int k = 10; k >= 0; --k) p = fma(p, z, 1.0LF / double(2 * k + 1));
  const double de = double(e) - scaled;
  precise const double r = de * D_LN2_HI + (2.0LF * s * p + de * D_LN2_LO);
  return r;
}

double d_log1p(double x) {
  precise const double u = 1.0LF + x;
  if (u == 1.0LF) return x;  // x below the rounding of 1 + x
  if (isinf(u) || u <= 0.0LF || isnan(u)) return d_log(u);
  precise const double rounded = u - 1.0LF;
  precise const double r = d_log(u) * (x / rounded);  // corrects the rounding of 1 + x
  return r;
}

// x - k pi/2 for the nearest k, returning k mod 4 in q.
double d_reduce_pio2(double x, out int q) {
  precise const double k = d_round_even(x * 0.63661977236758134308LF);
  q = int(mod(k, 4.0LF));
  precise const double r = ((x - k * D_PIO2_1) - k * D_PIO2_2) - k * D_PIO2_3;
  return r;
}
// sin and cos for |r| <= pi/4: Taylor to r^19 and r^20.
double d_sin_poly(double r) {
  precise const double z = r * r;
  precise double p = -1.0LF / 121645100408832000.0LF;
  p = fma(p, z, 1.0LF / 355687428096000.0LF);
  p = fma(p, z, -1.0LF / 1307674368000.0LF);
  p = fma(p, z, 1.0LF / 6227020800.0LF);
  p = fma(p, z, -1.0LF / 39916800.0LF);
  p = fma(p, z, 1.0LF / 362880.0LF);
  p = fma(p, z, -1.0LF / 5040.0LF);
  p = fma(p, z, 1.0LF / 120.0LF);
  p = fma(p, z, -1.0LF / 6.0LF);
  return fma(p * z, r, r);
}
double d_cos_poly(double r) {
  precise const double z = r * r;
  precise double p = 1.0LF / 2432902008176640000.0LF;
  p = fma(p, z, -1.0LF / 6402373705728000.0LF);
  p = fma(p, z, 1.0LF / 20922789888000.0LF);
  p = fma(p, z, -1.0LF / 87178291200.0LF);
  p = fma(p, z, 1.0LF / 479001600.0LF);
  p = fma(p, z, -1.0LF / 3628800.0LF);
  p = fma(p, z, 1.0LF / 40320.0LF);
  p = fma(p, z, -1.0LF / 720.0LF);
  p = fma(p, z, 1.0LF / 24.0LF);
  p = fma(p, z, -0.5LF);
  return fma(p, z, 1.0LF);
}

double d_sin(double x) {
  if (isinf(x)) return D_NAN;
  if (isnan(x) || x == 0.0LF) return x;
  int q;
  precise const double r = d_reduce_pio2(x, q);
  precise const double v = (q & 1) == 0 ? d_sin_poly(r) : d_cos_poly(r);
  return q >= 2 ? -v : v;
}
double d_cos(double x) {
  if (isinf(x)) return D_NAN;
  if (isnan(x)) return x;
  int q;
  precise const double r = d_reduce_pio2(x, q);
  precise const double v = (q & 1) == 0 ? d_cos_poly(r) : d_sin_poly(r);
  return (q == 1 || q == 2) ? -v : v;
}
double d_tan(double x) {
  if (isinf(x)) return D_NAN;
  if (isnan(x) || x == 0.0LF) return x;
  int q;
  precise const double r = d_reduce_pio2(x, q);
  precise const double s = d_sin_poly(r), c = d_cos_poly(r);
  return (q & 1) == 0 ? s / c : -c / s;
}

// atan for 0 <= a <= 1: shift by pi/4 above tan(pi/8), halve the angle once
// (|t| <= 0.2), then the series to t^25.
double d_atan_unit(double a) {
  precise double base = 0.0LF, t = a;
  if (a > 0.41421356237309504880LF) {
    base = D_PI_4;
    t = (a - 1.0LF) / (a + 1.0LF);
  }
  t = t / (1.0LF + sqrt(fma(t, t, 1.0LF)));
  precise const double z = t * t;
  precise double p = 1.0LF / 25.0LF;
  for (int k = 11; k >= 0; --k) p = fma(p, -z, 1.0LF / double(2 * k + 1));
  return base + 2.0LF * t * p;
}
double d_atan(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  precise const double a = abs(x);
  precise const double r = a <= 1.0LF ? d_atan_unit(a) : D_PI_2 - d_atan_unit(1.0LF / a);
  return d_copysign(r, x);
}
double d_atan2(double y, double x) {
  if (isnan(x) || isnan(y)) return D_NAN;
  if (y == 0.0LF && x == 0.0LF) return d_signbit(x) ? d_copysign(D_PI, y) : y;
  if (isinf(x) && isinf(y)) return d_copysign(x > 0.0LF ? D_PI_4 : 3.0LF * D_PI_4, y);
  if (isinf(x)) return d_copysign(x > 0.0LF ? 0.0LF : D_PI, y);
  precise const double a = d_atan(abs(y / x));  // y / x may round to 0 or inf: atan still right
  return d_copysign(x > 0.0LF ? a : D_PI - a, y);
}
double d_asin(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return D_NAN;
  if (x == 0.0LF) return x;
  return d_atan(x / sqrt((1.0LF - x) * (1.0LF + x)));
}
double d_acos(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return D_NAN;
  return 2.0LF * d_atan(sqrt((1.0LF - x) / (1.0LF + x)));
}

// e^a / 2 for large a, past where e^a overflows: (e^(a/2) / 2) e^(a/2).
double d_half_exp(double a) {
  precise const double e = d_exp(0.5LF * a);
  precise const double r = (0.5LF * e) * e;
  return r;
}

double d_sinh(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  precise const double a = abs(x);
  if (a > 709.0LF) return d_copysign(d_half_exp(a), x);
  precise const double m = d_expm1(a);
  return d_copysign(0.5LF * (m + m / (m + 1.0LF)), x);
}
double d_cosh(double x) {
  if (isnan(x)) return x;
  precise const double a = abs(x);
  if (a > 709.0LF) return d_half_exp(a);
  precise const double e = d_exp(a);
  return 0.5LF * (e + 1.0LF / e);
}
double d_tanh(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  precise const double a = abs(x);
  if (a > 22.0LF) return d_copysign(1.0LF, x);  // tanh(22) rounds to 1
  precise const double m = d_expm1(2.0LF * a);
  return d_copysign(m / (m + 2.0LF), x);
}
double d_asinh(double x) {
  if (isnan(x) || isinf(x) || x == 0.0LF) return x;
  precise const double a = abs(x);
  precise const double r = a > 268435456.0LF ? d_log(a) + D_LN2 : d_log1p(a + a * a / (1.0LF + sqrt(fma(a, a, 1.0LF))));
  return d_copysign(r, x);
}
double d_acosh(double x) {
  if (isnan(x) || x < 1.0LF) return D_NAN;
  if (isinf(x)) return x;
  if (x > 268435456.0LF) return d_log(x) + D_LN2;
  precise const double t = x - 1.0LF;
  return d_log1p(t + sqrt(fma(t, t, 2.0LF * t)));
}
double d_atanh(double x) {
  if (isnan(x) || abs(x) > 1.0LF) return D_NAN;
  if (abs(x) == 1.0LF) return d_copysign(D_INF, x);
  if (x == 0.0LF) return x;
  precise const double a = abs(x);
  return d_copysign(0.5LF * d_log1p(2.0LF * a / (1.0LF - a)), x);
}

// erf: below 3.5 the series e^-x^2 * 2/sqrt(pi) * sum 2^n x^(2n+1) / (2n+1)!!
// (positive terms: no cancellation); above, 1 - erfc with erfc from its
// continued fraction; 1 from 6 on (erfc(6) is below half an ulp of 1).
double d_erf(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  precise const double a = abs(x);
  if (a >= 6.0LF) return d_copysign(1.0LF, x);
  precise const double z = a * a;
  precise double r;
  if (a < 3.5LF) {
    precise double term = a, sum = a;
    for (int n = 1; n < 200; ++n) {
      term *= 2.0LF * z / double(2 * n + 1);
      sum += term;
      if (term < sum * 1e-17LF) break;
    }
    r = 1.12837916709551257390LF * d_exp(-z) * sum;
  } else {
    // erfc(a) = e^-a^2 / sqrt(pi) * 1 / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))), from the tail in.
    precise double f = a;
    for (int k = 60; k >= 1; --k) f = a + (0.5LF * double(k)) / f;
    r = 1.0LF - 0.56418958354775628695LF * d_exp(-z) / f;
  }
  return d_copysign(r, x);
}

// C's pow: integer exponents up to 64 by repeated squaring (exact where the
// result is), others through exp(b log |a|) (relative error about
// |b log a| * 2^-53), with C's rules for zeros, infinities, NaN and
// negative bases.
double d_pow(double a, double b) {
  if (b == 0.0LF || a == 1.0LF) return 1.0LF;
  if (isnan(a) || isnan(b)) return D_NAN;
  const bool b_int = floor(b) == b;
  const bool b_odd = b_int && !isinf(b) && abs(b) < 9007199254740992.0LF && mod(b, 2.0LF) != 0.0LF;
  precise const double m = abs(a);
  precise double r;
  if (m == 0.0LF) r = b < 0.0LF ? D_INF : 0.0LF;
  else if (isinf(m)) r = b < 0.0LF ? 0.0LF : D_INF;
  else if (isinf(b)) r = m == 1.0LF ? 1.0LF : ((m > 1.0LF) == (b > 0.0LF) ? D_INF : 0.0LF);
  else if (b_int && abs(b) <= 64.0LF) {
    int e = int(abs(b));
    precise double base = m;
    r = 1.0LF;
    for (; e != 0; e >>= 1) {
      if ((e & 1) != 0) r *= base;
      base *= base;
    }
    if (b < 0.0LF) r = 1.0LF / r;
  } else {
    r = d_exp(b * d_log(m));
  }
  if (d_signbit(a)) {
    if (!b_int && m != 0.0LF && !isinf(m)) return D_NAN;  // negative base, fractional power
    if (b_odd) r = -r;
  }
  return r;
}
