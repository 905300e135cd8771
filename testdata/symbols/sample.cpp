// C++ fixture: namespaces, classes, nested classes, methods in and out of class,
// overloads, templates, operators.
namespace geo {

class Shape {
 public:
  virtual double area() const { return 0.0; }

  class Builder {
   public:
    Shape build() { return Shape(); }
  };
};

template <typename T>
T maximum(T a, T b) {
  return a > b ? a : b;
}

struct Vec2 {
  double x, y;
  Vec2 operator+(const Vec2& o) const { return Vec2{x + o.x, y + o.y}; }
};

double scale(double v) { return v * 2; }
double scale(double v, double by) { return v * by; }

}  // namespace geo

int geo_count();

void Widget::draw(int times) {
  for (int i = 0; i < times; i++) {
    geo::scale(1.0);
  }
}
