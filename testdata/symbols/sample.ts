// TypeScript fixture: interfaces, type aliases, enums, generics, abstract classes,
// arrow functions, namespaces.

export interface Shape {
  area(): number;
}

export type Id = string | number;

export enum Direction {
  Up,
  Down,
}

export abstract class Base<T> {
  abstract describe(): string;

  clone(value: T): T {
    return value;
  }
}

export class Circle extends Base<number> implements Shape {
  constructor(private radius: number) {
    super();
  }

  area(): number {
    return Math.PI * this.radius ** 2;
  }

  describe(): string {
    return "circle";
  }
}

export const toId = (value: string): Id => value;

export function identity<T>(value: T): T {
  return value;
}

namespace Geometry {
  export function unit(): Circle {
    return new Circle(1);
  }
}
