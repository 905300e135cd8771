// TSX fixture: components as functions and arrow functions.
import React from "react";

interface Props {
  label: string;
}

export function Button(props: Props) {
  return <button>{props.label}</button>;
}

export const Panel = ({ label }: Props) => <div>{label}</div>;
